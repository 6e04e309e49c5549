/* util.c: allocation with overflow checks, error buffers, clocks. */
#include "config.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* From this size a zeroed array is mapped, not allocated and cleared. */
#define UTIL_MAP_MIN ((size_t)1 << 20)
/* Transparent huge pages: the 2 MiB pages the kernel may back a mapping with. */
#define UTIL_HUGE ((size_t)2 << 20)

int util_name_index(const char *name, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

void util_err_set(struct util_err *err, const char *fmt, ...)
{
	char raw[UTIL_ERR_MAX];
	size_t i, o = 0;
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	/* One line, always: control characters from hostile input (a key with
	 * a newline in it) are shown escaped, as \xNN. */
	for (i = 0; raw[i] && o + 5 < sizeof err->msg; i++) {
		unsigned char ch = (unsigned char)raw[i];

		if (ch < 0x20 || ch == 0x7f)
			o += (size_t)snprintf(err->msg + o, sizeof err->msg - o, "\\x%02x", ch);
		else
			err->msg[o++] = (char)ch;
	}
	err->msg[o] = '\0';
}

void util_err_no_memory(struct util_err *err)
{
	util_err_set(err, "out of memory");
	if (err != NULL)
		err->not_input = 1;
}

int util_mul_size(size_t n, size_t size, size_t *out)
{
	if (size != 0 && n > SIZE_MAX / size)
		return -1;
	*out = n * size;
	return 0;
}

/* Every array starts one cache line into its block, after this header,
 * so that util_free knows how the block was made. */
struct util_block {
	size_t bytes;  /* the whole block's */
	int mapped;    /* from mmap (zeroed by the system), else posix_memalign */
};

/* Ask for huge pages on the whole 2 MiB pages inside a mapping, never on
 * its partial ends: a huge page is resident whole from its first touch,
 * so one at an array's end would cost memory the array never uses. The grid
 * build gathers every field in the new cell order, and with 4 KiB pages
 * most of its loads also missed the TLB (where the kernel leaves huge
 * pages to madvise, as Debian's does): 8% to 29% of its time, measured in
 * docs/PERFORMANCE.md, 2026-12-06. Advice only: where the kernel has no
 * huge pages, or refuses, nothing changes. */
static void advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	uintptr_t a = (uintptr_t)p, lo, hi;

	lo = (a + UTIL_HUGE - 1) / UTIL_HUGE * UTIL_HUGE;
	hi = (a + len) / UTIL_HUGE * UTIL_HUGE;
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

static void *alloc_aligned(size_t n, size_t size, int zero, int huge, struct util_err *err)
{
	size_t bytes;
	void *p = NULL;
	struct util_block *b;
	int mapped;

	if (util_mul_size(n, size, &bytes) != 0 || bytes > SIZE_MAX - 3 * UTIL_ALIGN) {
		util_err_set(err, "allocation of %zu x %zu bytes overflows", n, size);
		return NULL;
	}
	/* Round up so that the tail of an array can be read by a full vector. */
	bytes = (bytes + UTIL_ALIGN - 1) / UTIL_ALIGN * UTIL_ALIGN;
	if (bytes == 0)
		bytes = UTIL_ALIGN;
	bytes += UTIL_ALIGN;
	/* Large zeroed arrays come from mmap, whose pages are zero and not
	 * resident until written: room sized for the worst case (a population
	 * schedule's capacity, a process's room for the whole flock in a split
	 * run) costs memory only for the part in use, where a memset would
	 * touch it all; and a mapping can be given huge pages. */
	mapped = zero && bytes >= UTIL_MAP_MIN;
	if (mapped) {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			util_err_set(err, "out of memory allocating %zu bytes", bytes);
			if (err != NULL)
				err->not_input = 1;
			return NULL;
		}
		if (huge)
			advise_huge(p, bytes);
	} else if (posix_memalign(&p, UTIL_ALIGN, bytes) != 0) {
		util_err_set(err, "out of memory allocating %zu bytes", bytes);
		if (err != NULL)
			err->not_input = 1;
		return NULL;
	} else if (zero) {
		memset(p, 0, bytes);
	}
	b = p;
	b->bytes = bytes;
	b->mapped = mapped;
	return (char *)p + UTIL_ALIGN;
}

void *util_alloc(size_t n, size_t size, struct util_err *err)
{
	return alloc_aligned(n, size, 1, 0, err);
}

void *util_alloc_huge(size_t n, size_t size, struct util_err *err)
{
	return alloc_aligned(n, size, 1, 1, err);
}

void *util_alloc_raw(size_t n, size_t size, struct util_err *err)
{
	return alloc_aligned(n, size, 0, 0, err);
}

void util_free(void *p)
{
	struct util_block *b;

	if (p == NULL)
		return;
	b = (struct util_block *)(void *)((char *)p - UTIL_ALIGN);
	if (b->mapped)
		munmap(b, b->bytes);
	else
		free(b);
}

static int reserve(void *pp, size_t *cap, size_t n, int zero, struct util_err *err)
{
	void **p = pp, *np;

	if (*p != NULL && *cap >= n)
		return 0;
	np = alloc_aligned(n, 1, zero, 0, err);
	if (np == NULL)
		return -1;
	util_free(*p);
	*p = np;
	*cap = n;
	return 0;
}

int util_reserve(void *pp, size_t *cap, size_t n, struct util_err *err)
{
	return reserve(pp, cap, n, 1, err);
}

int util_reserve_raw(void *pp, size_t *cap, size_t n, struct util_err *err)
{
	return reserve(pp, cap, n, 0, err);
}

double util_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t util_phys_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)page;
}
