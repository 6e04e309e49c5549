/* dist.h: one run split over the processes of an MPI communicator, byte
 * for byte the run of one process (./configure --with-mpi).
 *
 * The box is cut into slabs of whole cells along its last axis (rows of
 * cells in 2D, planes in 3D): cell order runs along that axis slowest, so
 * each process owns a stretch of the global cell order, and the slabs in
 * process order are the whole flock in the order one process would hold
 * it. Each step, every process takes the grid's geometry from exact
 * reductions over the whole flock (the extent's min and max; for the
 * crowding rule, once each boid is in the slab of its cell of reach 1 and
 * so each cell whole in one process, the sum of the processes' sums of
 * squared counts), sends the boids that left its slab to their owners,
 * receives copies of the boids in the rows within the stencil's
 * reach of its slab (its halo), sorts its boids and halo into cell order
 * and steps the boids of its own cells. A boid sees the same neighbours in
 * the same slots of the same spans as in one process, so its sums and
 * update are the same bits. Frames and the metrics are gathered to part 0,
 * which writes them; the metrics are measured there on the whole flock,
 * as one process would.
 *
 * What needs the whole flock in an order of its own goes through part 0
 * or every part, as one process would do it: the predators (part 0
 * gathers the boids each step, steps the predators and sends them to
 * every part), population events (part 0 gathers the flock at the event's
 * step, applies it by id and rank, and sends every part its share),
 * checkpoints and --check-invariants (gathered to part 0). A checkpoint
 * holds the whole flock, so a run resumes from it at any number of parts.
 * Brute force is not split (refused). Each process holds room for the
 * whole flock (its arrays and the grid's cells; part 0 a whole copy too),
 * so memory does not yet shrink with the number of processes. */
#ifndef BOIDSIM_DIST_H
#define BOIDSIM_DIST_H

#include "ctx.h"
#include "util.h"

struct sim_ops;
struct reduce;
struct scenario;
struct dist;

/* A split over comm (an MPI_Comm, passed as a pointer to one so that this
 * header needs no mpi.h): the caller keeps MPI initialised (with at least
 * MPI_THREAD_FUNNELED) while it is used. Returns NULL with err filled. */
struct dist *dist_open(const void *comm, struct util_err *err);
void dist_close(struct dist *d);

/* This process's part and the number of parts. */
int dist_part(const struct dist *d);
int dist_parts(const struct dist *d);

/* The reductions over the whole flock (reduce.h) through MPI. */
const struct reduce *dist_reduce(const struct dist *d);

/* The backend of a split simulation (sim.h), which sim_init takes when the
 * context has a dist. */
const struct sim_ops *dist_sim_ops(void);

#endif
