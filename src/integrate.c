/* integrate.c: semi-implicit Euler step of velocity then position. */
#include "config.h"
#include "integrate.h"

#include <math.h>

void integrate_params_init(struct integrate_params *ip, const struct scenario *sc,
			   const struct bounds *box)
{
	ip->dims = sc->dims;
	ip->dt = sc->dt;
	ip->speed_min = sc->speed_min;
	ip->speed_max = sc->speed_max;
	ip->box = box;
}

void integrate_boid(const struct integrate_params *ip, const double acc[3],
		    const float pos[3], const float vel[3], double smax,
		    float pos_out[3], float vel_out[3])
{
	double v[3] = {0, 0, 0}, p[3] = {0, 0, 0}, s2 = 0, s, scale = 1.0;
	int k, dims = ip->dims;

	for (k = 0; k < dims; k++) {
		v[k] = (double)vel[k] + acc[k] * ip->dt;
		s2 += v[k] * v[k];
	}
	s = sqrt(s2);
	if (s > smax) {
		scale = smax / s;
	} else if (s < ip->speed_min) {
		if (s > 0.0) {
			scale = ip->speed_min / s;
		} else {
			/* No direction left: keep the old heading at minimum speed. */
			double o2 = 0;

			for (k = 0; k < dims; k++) {
				v[k] = vel[k];
				o2 += v[k] * v[k];
			}
			scale = o2 > 0.0 ? ip->speed_min / sqrt(o2) : 0.0;
		}
	}
	for (k = 0; k < dims; k++) {
		vel_out[k] = (float)(v[k] * scale);
		p[k] = (double)pos[k] + (double)vel_out[k] * ip->dt;
	}
	bounds_apply(ip->box, p, vel_out);
	for (k = 0; k < dims; k++)
		pos_out[k] = (float)p[k];
}
