/* Victim: a C program that dlopens a C++ library (lateplus.cc, path in argv[1]) with RTLD_LOCAL
 * and calls it: new and delete must work under the shim. Prints "ok N". */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*f)(void);

	if (!h)
		return 2;
	*(void **)&f = dlsym(h, "late_cxx");
	if (!f)
		return 3;
	printf("ok %d\n", f());
	return 0;
}
