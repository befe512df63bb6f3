/* The clock memscope-record's shim keeps time with, as the launcher chooses and reads it
 * (memscope/record.h): the CPU's invariant counter where the kernel trusts it, else
 * CLOCK_MONOTONIC. */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "memscope/record.h"
#include "spool_fmt.h"

int memscope_record_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char buf[32] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return SPOOL_CLOCK_MONO;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	/* the kernel keeps time with the TSC only when it found it invariant and in step on every
	 * CPU */
	return n >= 3 && !memcmp(buf, "tsc", 3) && (n == 3 || buf[3] == '\n') ? SPOOL_CLOCK_TSC
									      : SPOOL_CLOCK_MONO;
#elif defined(__aarch64__)
	return SPOOL_CLOCK_TSC; /* the architected generic timer, in step on every CPU */
#else
	return SPOOL_CLOCK_MONO;
#endif
}

void memscope_record_now(int clock, uint64_t *tick, uint64_t *mono_ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	*mono_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
	*tick = *mono_ns;
#if defined(__x86_64__) || defined(__i386__)
	if (clock == SPOOL_CLOCK_TSC)
		*tick = __rdtsc();
#elif defined(__aarch64__)
	if (clock == SPOOL_CLOCK_TSC)
		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(*tick));
#else
	(void)clock;
#endif
}
