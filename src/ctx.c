/* ctx.c: the caller's choices for the library, and its one way of speaking. */
#include "config.h"
#include "ctx.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One table of the levels, in enum order. */
static const char *const SIMD_NAMES[CTX_SIMD_LEVELS] = {"avx512", "avx2", "baseline"};

void ctx_init(struct ctx *c)
{
	memset(c, 0, sizeof *c);
	c->verbosity = CTX_NORMAL;
	c->parallel_min = CTX_PARALLEL_MIN_DEFAULT;
	c->simd = CTX_SIMD_BEST;
	c->parts = 1;
}

void ctx_log(const struct ctx *c, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (c == NULL || c->log == NULL || level > c->verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->log(c->log_user, level, msg);
}

const char *ctx_simd_name(enum ctx_simd s)
{
	return s >= 0 && s < CTX_SIMD_LEVELS ? SIMD_NAMES[s] : "best";
}

int ctx_simd_parse(const char *name, enum ctx_simd *out)
{
	int i = util_name_index(name, SIMD_NAMES, CTX_SIMD_LEVELS);

	if (i < 0)
		return -1;
	*out = (enum ctx_simd)i;
	return 0;
}
