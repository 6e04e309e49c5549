/* util.h: allocation, error-buffer and small numeric helpers shared by the engine. */
#ifndef BOIDSIM_UTIL_H
#define BOIDSIM_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Every hot array is aligned to a cache line, so vectorised loops see the
 * same alignment on every run and no peeling depends on addresses. */
#define UTIL_ALIGN 64

/* Error buffers are passed down by callers; functions that fail fill one
 * line (no newline) and return -1. Room for two paths of PATH_MAX (4096)
 * and the words around them, as in a clash of two outputs' names. */
#define UTIL_ERR_MAX 12288

struct util_err {
	char msg[UTIL_ERR_MAX];
	/* Set, and never cleared by util_err_set, when the failure was the
	 * system's rather than the input's (memory ran out, a local temporary
	 * file could not be written): the commands exit 1 then, and 2 for bad
	 * input. */
	int not_input;
};

void util_err_set(struct util_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "out of memory", and not_input set. */
void util_err_no_memory(struct util_err *err);

/* n * size with overflow check; returns 0 and sets *out, or -1. */
int util_mul_size(size_t n, size_t size, size_t *out);

/* Aligned, zeroed allocation of n elements of size bytes; NULL on overflow
 * or exhaustion (with err filled when err is not NULL). Free with util_free
 * (only: the block has a header). From a MiB on, the zeros are the
 * system's: pages not written are never resident. */
void *util_alloc(size_t n, size_t size, struct util_err *err);
void util_free(void *p);
/* util_alloc for the per-boid arrays that are read in random order (the
 * grid build's gathers): the whole 2 MiB pages inside the array are
 * offered to the kernel as transparent huge pages, which cut the TLB
 * misses of those reads. A huge page is resident whole from its first
 * touch, so room beyond the part in use may cost up to 2 MiB an array. */
void *util_alloc_huge(size_t n, size_t size, struct util_err *err);

/* The same, not zeroed: for arrays that are always written before they are
 * read. Pages never written are never resident, so an array sized for the
 * worst case costs memory only for the part in use. */
void *util_alloc_raw(size_t n, size_t size, struct util_err *err);

/* Makes *pp (an aligned array from util_alloc, holding *cap bytes) at least
 * n bytes: kept when large enough, else replaced by a zeroed one. */
int util_reserve(void *pp, size_t *cap, size_t n, struct util_err *err);
int util_reserve_raw(void *pp, size_t *cap, size_t n, struct util_err *err);

/* The index of name among the n names of a table, or -1: the one lookup
 * of the command line's and the library's name tables. */
int util_name_index(const char *name, const char *const *names, int n);

/* A monotonic clock in seconds, for timing only (never for results). */
double util_seconds(void);

/* Physical memory in bytes, or 0 when unknown. */
uint64_t util_phys_mem(void);

#endif
