// Victim: planted leaks through C++ operator new, new[] and aligned new; objects deleted too.
#include <cstddef>
#include <new>
#include <unistd.h>

struct node {
	char pad[48];
};

struct alignas(64) wide {
	char pad[192];
};

void *victim_keep[64];

__attribute__((noinline)) node *make_node()
{
	return new node; // LEAK 48
}

__attribute__((noinline)) int *make_array(std::size_t n)
{
	return new int[n]; // LEAK 400
}

__attribute__((noinline)) wide *make_wide()
{
	return new wide; // LEAK 192
}

int main()
{
	victim_keep[0] = make_node();
	victim_keep[1] = make_array(100);
	victim_keep[2] = make_wide();
	for (int i = 0; i < 10; i++) {
		// through volatile pointers: a new whose object is only deleted may be elided
		node *volatile n = new node;
		int *volatile a = new int[i + 1];
		wide *volatile w = new wide;
		delete n;
		delete[] a;
		delete w;
	}
	victim_keep[3] = new (std::nothrow) char[77]; // LEAK 77
	ssize_t r = write(1, "ok\n", 3);
	return r == 3 ? 0 : 1;
}
