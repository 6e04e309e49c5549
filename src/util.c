/* util.c: allocation with overflow checks, error buffers, clocks. */
#include "config.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int util_mul_size(size_t n, size_t size, size_t *out)
{
	if (size != 0 && n > SIZE_MAX / size)
		return -1;
	*out = n * size;
	return 0;
}

static void *alloc_aligned(size_t n, size_t size, int zero, struct util_err *err)
{
	size_t bytes;
	void *p = NULL;

	if (util_mul_size(n, size, &bytes) != 0 || bytes > SIZE_MAX - UTIL_ALIGN) {
		util_err_set(err, "allocation of %zu x %zu bytes overflows", n, size);
		return NULL;
	}
	/* Round up so that the tail of an array can be read by a full vector. */
	bytes = (bytes + UTIL_ALIGN - 1) / UTIL_ALIGN * UTIL_ALIGN;
	if (bytes == 0)
		bytes = UTIL_ALIGN;
	if (posix_memalign(&p, UTIL_ALIGN, bytes) != 0) {
		util_err_set(err, "out of memory allocating %zu bytes", bytes);
		return NULL;
	}
	if (zero)
		memset(p, 0, bytes);
	return p;
}

void *util_alloc(size_t n, size_t size, struct util_err *err)
{
	return alloc_aligned(n, size, 1, err);
}

void *util_alloc_raw(size_t n, size_t size, struct util_err *err)
{
	return alloc_aligned(n, size, 0, err);
}

void util_free(void *p)
{
	free(p);
}

static int reserve(void *pp, size_t *cap, size_t n, int zero, struct util_err *err)
{
	void **p = pp, *np;

	if (*p != NULL && *cap >= n)
		return 0;
	np = alloc_aligned(n, 1, zero, err);
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
