/* metrics.h: order parameters of a flock. */
#ifndef BOIDSIM_METRICS_H
#define BOIDSIM_METRICS_H

#include "flock.h"

/* Polarization |sum_i v_i/|v_i|| / N (Vicsek et al. 1995, the order
 * parameter v_a): 1 when all boids head the same way, about 1/sqrt(N) for
 * random headings. Boids standing still contribute a zero vector. Summed in
 * double in slot order, so it is the same for any thread count. */
double metrics_polarization(const struct flock *f);

#endif
