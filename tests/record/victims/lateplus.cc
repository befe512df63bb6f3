// Victim library: C++ loaded by a C program with dlopen(RTLD_LOCAL) after the shim started (a
// Python extension's case), so the C++ runtime is outside the scope the shim looks in first.
#include <string>

extern "C" int late_cxx(void)
{
	int *p = new int[10];
	p[0] = 1;
	int r = p[0];
	delete[] p;
	std::string *s = new std::string("long enough to be allocated on the heap, not inline");
	r += (int)s->size();
	delete s;
	return r;
}
