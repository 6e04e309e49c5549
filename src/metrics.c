/* metrics.c: order parameters computed from the flock's state. */
#include "config.h"
#include "metrics.h"

#include <math.h>

double metrics_polarization(const struct flock *f)
{
	double sum[3] = {0, 0, 0}, s2 = 0;
	size_t k;
	int d;

	if (f->n == 0)
		return 0.0;
	for (k = 0; k < f->n; k++) {
		double v2 = 0, inv;

		for (d = 0; d < f->dims; d++)
			v2 += (double)f->vel[d][k] * f->vel[d][k];
		if (v2 == 0.0)
			continue;
		inv = 1.0 / sqrt(v2);
		for (d = 0; d < f->dims; d++)
			sum[d] += f->vel[d][k] * inv;
	}
	for (d = 0; d < f->dims; d++)
		s2 += sum[d] * sum[d];
	return sqrt(s2) / (double)f->n;
}
