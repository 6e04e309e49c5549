/* ctx.h: what the caller of the library decides for it: how loud it is and
 * where its messages go, which SIMD level the neighbour loop uses, and from
 * how many boids a loop runs on several threads. The library keeps no
 * process globals and reads no environment: whatever it would take from the
 * process (BOIDSIM_SIMD, -q, -v) the caller puts here, as jq's
 * jq_set_error_cb takes the place of printing. */
#ifndef BOIDSIM_CTX_H
#define BOIDSIM_CTX_H

#include <stddef.h>
#include <stdint.h>

struct reduce;
struct dist;

/* Below this many boids a parallel loop costs more in waking and joining
 * threads than it saves (and on a busy machine far more), so it runs on the
 * calling thread. Results do not depend on it; the tests set it to 0 to run
 * small flocks on several threads. */
#define CTX_PARALLEL_MIN_DEFAULT 4096

enum ctx_level { CTX_QUIET = 0, CTX_NORMAL = 1, CTX_VERBOSE = 2 };

/* The SIMD levels of the neighbour loop and the update, best first; the
 * names are those of BOIDSIM_SIMD and of -v's report. CTX_SIMD_BEST takes
 * the best the processor has. Every level gives the same bits. */
enum ctx_simd { CTX_SIMD_BEST = -1, CTX_SIMD_AVX512 = 0, CTX_SIMD_AVX2, CTX_SIMD_BASELINE,
		CTX_SIMD_LEVELS };

/* A message of the library, one line without newline and without the
 * program's name, at its level (CTX_NORMAL or CTX_VERBOSE). */
typedef void ctx_log_fn(void *user, int level, const char *msg);

/* How a split run sizes its parts' slabs: to each part's measured speed
 * (boids stepped per second of its last steps), so that a slower machine
 * or a denser slab gets fewer boids; or to an even share of the boids,
 * which makes the split a function of the state alone. Either gives the
 * same bytes: which part steps a boid does not change its result. */
enum ctx_balance { CTX_BALANCE_TIME = 0, CTX_BALANCE_BOIDS };

struct ctx {
	int verbosity;          /* messages above it are dropped */
	ctx_log_fn *log;        /* NULL: the library says nothing */
	void *log_user;
	size_t parallel_min;
	enum ctx_simd simd;
	/* How the flock is split over processes: the reductions over the
	 * whole of it (reduce.h); NULL: one process holds it all. With dist
	 * (dist.h, an MPI communicator's), the simulation is split over its
	 * parts, and this process is part number part of parts: part 0 alone
	 * writes the outputs. */
	const struct reduce *reduce;
	struct dist *dist;
	int part, parts;
	/* Of a split run: every part's status at the end of its setup, in
	 * one collective call (a part that fails its setup still makes it):
	 * returns the worst (largest), sets *uniform when all were the same,
	 * and *same when every part passed the same digest (what it read;
	 * 0 where there is none to compare). NULL: one process. */
	int (*agree)(void *user, int status, uint64_t digest, int *uniform, int *same);
	void *agree_user;
	/* Of a split run: a part that cannot go on in the middle of a step
	 * (out of memory in an exchange) while the others wait for it in a
	 * collective call: the caller says msg and ends the whole run
	 * (MPI_Abort), without returning. A split run needs it. */
	void (*fail)(void *user, const char *msg);
	void *fail_user;
	/* Of a split run: how the slabs are sized (dist.c). */
	enum ctx_balance balance;
};

/* Quiet to the world (no log), CTX_NORMAL, CTX_PARALLEL_MIN_DEFAULT, the
 * best SIMD, one process. */
void ctx_init(struct ctx *c);

/* Formats a message and hands it to c's log when level <= c->verbosity;
 * c may be NULL (nothing said). */
void ctx_log(const struct ctx *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The name of a level ("avx512", "avx2", "baseline"), and its inverse:
 * 0, or -1 for a name that is none of them. */
const char *ctx_simd_name(enum ctx_simd s);
int ctx_simd_parse(const char *name, enum ctx_simd *out);

#endif
