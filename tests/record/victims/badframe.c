/* Victim: calls malloc with rbp holding what code built without frame pointers may leave there
 * (-16, 3, a pointer into a PROT_NONE page, a pointer to a garbage chain): the stack walk must
 * stop, never fault. Mode by argument: h, s, n, x. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *victim_rbp; /* what rbp holds at the call */

#if defined(__x86_64__)
__attribute__((noinline)) static void *alloc_with_rbp(size_t n)
{
	void *p;

	/* n into rdi first (it may sit in rbp or r12), the stack aligned for the call */
	__asm__ volatile("mov %1, %%rdi\n\t"
			 "push %%rbp\n\t"
			 "push %%r12\n\t"
			 "mov %%rsp, %%r12\n\t"
			 "and $-16, %%rsp\n\t"
			 "mov victim_rbp(%%rip), %%rbp\n\t"
			 "call malloc@PLT\n\t"
			 "mov %%r12, %%rsp\n\t"
			 "pop %%r12\n\t"
			 "pop %%rbp\n\t"
			 "mov %%rax, %0\n\t"
			 : "=r"(p)
			 : "r"(n)
			 : "rax", "rdi", "rsi", "rdx", "rcx", "r8", "r9", "r10", "r11", "memory");
	return p;
}
#else
static void *alloc_with_rbp(size_t n)
{
	return malloc(n); /* the case is x86-64's */
}
#endif

int main(int argc, char **argv)
{
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char mode = argc > 1 ? argv[1][0] : 'h';
	void *p;

	if (m == MAP_FAILED)
		return 1;
	if (mode == 'n') {
		mprotect(m, 4096, PROT_NONE);
		victim_rbp = m + 16;
	} else if (mode == 's') {
		victim_rbp = (void *)3;
	} else if (mode == 'x') {
		((void **)m)[0] = (void *)0x7fffffffff00;
		((void **)m)[1] = (void *)0x1234;
		victim_rbp = m;
	} else {
		victim_rbp = (void *)-16L;
	}
	p = alloc_with_rbp(100);
	if (write(1, p ? "ok\n" : "no\n", 3) != 3)
		return 1;
	free(p);
	return 0;
}
