/* metrics.h: order parameters of a flock, for --metrics. */
#ifndef BOIDSIM_METRICS_H
#define BOIDSIM_METRICS_H

#include <stdint.h>
#include <stdio.h>
#include "flock.h"
#include "grid.h"
#include "rules.h"
#include "util.h"

/* Polarization |sum_i v_i/|v_i|| / N (Vicsek et al. 1995, the order
 * parameter v_a; Couzin et al. 2002, p_group): 1 when all boids head the
 * same way, about 1/sqrt(N) for random headings. Boids standing still
 * contribute a zero vector. */
double metrics_polarization(const struct flock *f);

struct metrics_row {
	double polarization;
	double milling;        /* Couzin's m_group, angular momentum about the centroid */
	double mean_speed;
	double centroid[3];
	double gyration;       /* radius of gyration about the centroid */
	double nn_distance;    /* mean distance to the nearest other boid */
	uint64_t groups;       /* connected components within the largest radius */
	/* Colour following only: |sum_i u_i| / N for the boids' hue unit
	 * vectors u_i, the mean resultant length of the hues (Mardia & Jupp,
	 * Directional Statistics, 2000, section 2.3.1): 1 when every boid has
	 * the same hue, about 1/sqrt(N) for random hues; the circular variance
	 * is 1 minus it. */
	int has_hue;
	double hue_order;
};

struct metrics {
	uint32_t *parent;      /* scratch for the groups */
	double *nn;            /* per slot nearest distance */
};

int metrics_init(struct metrics *m, size_t n, struct util_err *err);
void metrics_free(struct metrics *m);

/* Every order parameter of f. g is a grid built for f's current positions
 * (NULL: brute force). Sums run in double, serially in slot order, so the
 * values do not depend on the thread count. */
void metrics_compute(struct metrics *m, const struct flock *f, const struct grid *g,
		     const struct rules_params *rp, struct metrics_row *row);

/* The CSV header and one row: step, time, then the fields above (hue_order
 * last, only with colour following). */
int metrics_write_header(FILE *fp, int dims, int has_hue);
int metrics_write_row(FILE *fp, int dims, uint64_t step, double dt,
		      const struct metrics_row *row);

#endif
