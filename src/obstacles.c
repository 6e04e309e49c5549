/* obstacles.c: geometry of the obstacles: nearest surface points for
 * steering, and swept collisions with reflection for never passing through
 * (a boid moving from p0 to p1 is tested along the whole segment). */
#include "config.h"
#include "obstacles.h"
#include "detmath.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

void obstacle_nearest(const struct obstacle *o, int dims, const double p[3], double q[3],
		      int *inside)
{
	int d;

	memset(q, 0, 3 * sizeof *q);
	*inside = 0;
	switch (o->kind) {
	case OBSTACLE_SPHERE: {
		double r2 = 0, n;

		for (d = 0; d < dims; d++)
			r2 += (p[d] - o->a[d]) * (p[d] - o->a[d]);
		n = sqrt(r2);
		*inside = n < o->radius;
		for (d = 0; d < dims; d++)
			q[d] = n > 0 ? o->a[d] + (p[d] - o->a[d]) * (o->radius / n) :
			       o->a[d] + (d == 0 ? o->radius : 0.0);
		break;
	}
	case OBSTACLE_BOX: {
		double best = INFINITY;
		int in = 1, axis = 0, side = 0;

		for (d = 0; d < dims; d++) {
			q[d] = clampd(p[d], o->a[d], o->b[d]);
			if (p[d] <= o->a[d] || p[d] >= o->b[d])
				in = 0;
		}
		if (in) { /* inside: the nearest face */
			for (d = 0; d < dims; d++) {
				if (p[d] - o->a[d] < best)
					best = p[d] - o->a[d], axis = d, side = 0;
				if (o->b[d] - p[d] < best)
					best = o->b[d] - p[d], axis = d, side = 1;
			}
			memcpy(q, p, 3 * sizeof *q);
			q[axis] = side ? o->b[axis] : o->a[axis];
			*inside = 1;
		}
		break;
	}
	case OBSTACLE_SEGMENT: {
		double ab[3] = {0, 0, 0}, t = 0, l2 = 0;

		for (d = 0; d < dims; d++) {
			ab[d] = o->b[d] - o->a[d];
			l2 += ab[d] * ab[d];
			t += (p[d] - o->a[d]) * ab[d];
		}
		t = l2 > 0 ? clampd(t / l2, 0.0, 1.0) : 0.0;
		for (d = 0; d < dims; d++)
			q[d] = o->a[d] + t * ab[d];
		break;
	}
	}
}

int obstacle_inside(const struct obstacle *o, int dims, const double p[3])
{
	int d;

	switch (o->kind) {
	case OBSTACLE_SPHERE: {
		double r2 = 0;

		/* obstacle_nearest's test, operation for operation */
		for (d = 0; d < dims; d++)
			r2 += (p[d] - o->a[d]) * (p[d] - o->a[d]);
		return sqrt(r2) < o->radius;
	}
	case OBSTACLE_BOX:
		for (d = 0; d < dims; d++)
			if (p[d] <= o->a[d] || p[d] >= o->b[d])
				return 0;
		return 1;
	case OBSTACLE_SEGMENT:
		break;
	}
	return 0;
}

/* Mirror the remainder of the move (from the hit point h, fraction t of
 * the move done) and the velocity about the unit normal n. */
double obstacle_backoff(int dims, const double h[3])
{
	double big = 0.0;
	int d;

	for (d = 0; d < dims; d++)
		big = detmath_fmax(big, fabs(h[d]));
	/* 1e-9 is eight units in the last place of 2^20: beyond, it would
	 * vanish in the rounding of h + 1e-9 n (a review saw boids near 1e7
	 * mirrored back across the wall they had hit) */
	return big >= 0x1p20 ? ldexp(8.0, ilogb(big) - (DBL_MANT_DIG - 1)) : 1e-9;
}

void obstacle_reflect(int dims, double p0[3], double p1[3], double v[3], double t,
		      const double n[3])
{
	double h[3], rest[3], rn = 0, vn = 0, eps;
	int d;

	for (d = 0; d < dims; d++) {
		h[d] = p0[d] + t * (p1[d] - p0[d]);
		rest[d] = p1[d] - h[d];
		rn += rest[d] * n[d];
		vn += v[d] * n[d];
	}
	eps = obstacle_backoff(dims, h);
	for (d = 0; d < dims; d++) {
		/* back off a hair along the normal so the boid stays outside */
		p1[d] = h[d] + rest[d] - 2.0 * rn * n[d] + eps * n[d];
		v[d] -= 2.0 * vn * n[d];
		p0[d] = h[d] + eps * n[d];
	}
}

void obstacle_reverse(int dims, double p0[3], double p1[3], double v[3], double t)
{
	double h[3], dir[3], len = 0.0, eps;
	int d;

	for (d = 0; d < dims; d++) {
		dir[d] = p1[d] - p0[d];
		h[d] = p0[d] + t * dir[d];
		len += dir[d] * dir[d];
	}
	len = sqrt(len);
	eps = obstacle_backoff(dims, h);
	for (d = 0; d < dims; d++) {
		p1[d] = h[d] - (p1[d] - h[d]) - eps * dir[d] / len;
		v[d] = -v[d];
		p0[d] = h[d] - eps * dir[d] / len;
	}
}

int obstacle_hit(const struct obstacle *o, int dims, const double p0[3], const double p1[3],
		 double *tp, double n[3])
{
	double dir[3] = {0, 0, 0}, t = -1.0;
	int d;

	n[0] = n[1] = n[2] = 0.0;
	for (d = 0; d < dims; d++)
		dir[d] = p1[d] - p0[d];
	switch (o->kind) {
	case OBSTACLE_SPHERE: {
		/* |p0 + t dir - c| = r, smallest t in [0, 1] */
		double a = 0, b = 0, c = -o->radius * o->radius, disc, s;

		for (d = 0; d < dims; d++) {
			double m = p0[d] - o->a[d];

			a += dir[d] * dir[d];
			b += 2.0 * m * dir[d];
			c += m * m;
		}
		if (a == 0.0 || c < 0.0) /* no move, or already inside: leave it */
			return 0;
		disc = b * b - 4.0 * a * c;
		if (disc < 0.0)
			return 0;
		s = (-b - sqrt(disc)) / (2.0 * a);
		if (s < 0.0 || s > 1.0)
			return 0;
		t = s;
		for (d = 0; d < dims; d++)
			n[d] = (p0[d] + t * dir[d] - o->a[d]) / o->radius;
		/* The hit point is on the sphere only to the rounding of a move
		 * as long as the coordinates: for a radius tiny beside them, or a
		 * move far longer, n is no longer a unit vector and the mirror
		 * would change the speed (a review saw 1 become 1.22, and 1e9
		 * become 3e13). Normalised then only, so that every ordinary
		 * bounce keeps its bits. */
		{
			double n2 = 0.0;

			for (d = 0; d < dims; d++)
				n2 += n[d] * n[d];
			if (fabs(n2 - 1.0) > 1e-9 && n2 > 0.0) {
				const double len = sqrt(n2);

				for (d = 0; d < dims; d++)
					n[d] /= len;
			}
		}
		break;
	}
	case OBSTACLE_BOX: {
		/* slab method: entering time and the face entered */
		double tin = -INFINITY, tout = INFINITY;
		int axis = -1, sign = 0;

		for (d = 0; d < dims; d++) {
			double t0, t1;

			if (dir[d] == 0.0) {
				if (p0[d] <= o->a[d] || p0[d] >= o->b[d])
					return 0;
				continue;
			}
			t0 = (o->a[d] - p0[d]) / dir[d];
			t1 = (o->b[d] - p0[d]) / dir[d];
			if (t0 > t1) {
				double x = t0;

				t0 = t1;
				t1 = x;
			}
			if (t0 > tin) {
				tin = t0;
				axis = d;
				sign = dir[d] > 0 ? -1 : 1;
			}
			if (t1 < tout)
				tout = t1;
		}
		if (axis < 0 || tin > tout || tin < 0.0 || tin > 1.0)
			return 0;
		t = tin;
		n[axis] = sign;
		break;
	}
	case OBSTACLE_SEGMENT: {
		/* 2D: the move crosses the segment a-b */
		double e0 = o->b[0] - o->a[0], e1 = o->b[1] - o->a[1];
		double den = dir[0] * e1 - dir[1] * e0, s, u, len;

		if (dims != 2 || den == 0.0)
			return 0;
		s = ((o->a[0] - p0[0]) * e1 - (o->a[1] - p0[1]) * e0) / den;
		u = ((o->a[0] - p0[0]) * dir[1] - (o->a[1] - p0[1]) * dir[0]) / den;
		/* A move through a polyline's joint hits both of its segments
		 * at u = 1 and u = 0 exactly; rounding can make both miss, so
		 * each end is widened by OBSTACLE_END_TOL of the segment. */
		if (s < 0.0 || s > 1.0 || u < -OBSTACLE_END_TOL || u > 1.0 + OBSTACLE_END_TOL)
			return 0;
		/* A move along the segment's line makes den rounding noise, and
		 * s and u those of a crossing that is not there (a review's: the
		 * point 0.32 off the segment). The point of the move must lie in
		 * the segment's box, to within half the index's query margin
		 * (1e-6 x (1 + the largest coordinate), obstacles.h), far above
		 * the rounding of a true crossing: so too every segment hit is
		 * one the index lists. */
		{
			double big = 0.0, m;

			for (d = 0; d < 2; d++)
				big = detmath_fmax(big, detmath_fmax(detmath_fmax(fabs(p0[d]), fabs(p1[d])),
						     detmath_fmax(fabs(o->a[d]), fabs(o->b[d]))));
			m = 0.5e-6 * (1.0 + big);
			for (d = 0; d < 2; d++) {
				const double x = p0[d] + s * dir[d];

				if (x < detmath_fmin(o->a[d], o->b[d]) - m || x > detmath_fmax(o->a[d], o->b[d]) + m)
					return 0;
			}
		}
		t = s;
		len = sqrt(e0 * e0 + e1 * e1);
		n[0] = -e1 / len;
		n[1] = e0 / len;
		if (n[0] * dir[0] + n[1] * dir[1] > 0) { /* face the incoming boid */
			n[0] = -n[0];
			n[1] = -n[1];
		}
		break;
	}
	}
	*tp = t;
	return 1;
}

int obstacle_collide(const struct obstacle *o, int dims, double p0[3], double p1[3],
		     double v[3])
{
	double t, n[3];

	if (!obstacle_hit(o, dims, p0, p1, &t, n))
		return 0;
	obstacle_reflect(dims, p0, p1, v, t, n);
	return 1;
}

double obstacle_side(const struct obstacle *o, const double p[3])
{
	return (o->b[0] - o->a[0]) * (p[1] - o->a[1]) - (o->b[1] - o->a[1]) * (p[0] - o->a[0]);
}

/* ---- the index ---- */

struct obstacle_index {
	int n, dims;
	double scale;           /* the largest coordinate of any obstacle's box */
	double reach;           /* every box is widened by this, and queries shrunk */
	double org[3], inv_h;   /* cell c covers [org + c h, org + (c + 1) h) */
	int nc[3];
	uint32_t *start;        /* cell k lists item[start[k] .. start[k + 1]) */
	uint16_t *item;
	double (*box)[2][3];    /* each obstacle's own box (bbox), not widened */
	double cell_cost;       /* 1 + the mean entries of a cell: a query's cost a cell */
};

/* Past this many cells or entries, the cells grow (memory stays below
 * about 1 MB for cells and 2 MB for entries). */
#define INDEX_CELLS_MAX (1 << 18)
#define INDEX_ENTRIES_MAX ((size_t)1 << 20)

static void bbox(const struct obstacle *o, int dims, double lo[3], double hi[3])
{
	int d;

	for (d = 0; d < 3; d++)
		lo[d] = hi[d] = 0.0;
	for (d = 0; d < dims; d++) {
		switch (o->kind) {
		case OBSTACLE_SPHERE:
			lo[d] = o->a[d] - o->radius;
			hi[d] = o->a[d] + o->radius;
			break;
		case OBSTACLE_BOX:
			lo[d] = o->a[d];
			hi[d] = o->b[d];
			break;
		case OBSTACLE_SEGMENT:
			lo[d] = detmath_fmin(o->a[d], o->b[d]);
			hi[d] = detmath_fmax(o->a[d], o->b[d]);
			break;
		}
	}
}

/* The cell coordinate of x on axis d: -1 below the grid, nc[d] above it.
 * Monotonic in x (a subtraction and a product by a positive number are),
 * which is all the index relies on: a point inside a box is in a cell
 * between the box's corner cells. */
static int cell_coord(const struct obstacle_index *ix, int d, double x)
{
	double t = (x - ix->org[d]) * ix->inv_h;

	if (!(t >= 0.0))
		return -1;
	if (t >= (double)ix->nc[d])
		return ix->nc[d];
	return (int)t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void obstacle_index_free(struct obstacle_index *ix)
{
	if (ix == NULL)
		return;
	free(ix->start);
	free(ix->item);
	free(ix->box);
	free(ix);
}

/* The number of entries of the cells of every obstacle's widened box
 * [blo, bhi] at the current cell size (stopping early past
 * INDEX_ENTRIES_MAX); fill 1 also counts each cell's entries into
 * start[cell + 1], fill 2 writes them at start[cell]++. */
static size_t index_entries(struct obstacle_index *ix, const double (*blo)[3],
			    const double (*bhi)[3], int fill)
{
	size_t total = 0;
	int i, c0[3], c1[3], x, y, z, d;

	for (i = 0; i < ix->n; i++) {
		for (d = 0; d < 3; d++) {
			c0[d] = d < ix->dims ? cell_coord(ix, d, blo[i][d]) : 0;
			c1[d] = d < ix->dims ? cell_coord(ix, d, bhi[i][d]) : 0;
			c0[d] = c0[d] < 0 ? 0 : c0[d] >= ix->nc[d] ? ix->nc[d] - 1 : c0[d];
			c1[d] = c1[d] < 0 ? 0 : c1[d] >= ix->nc[d] ? ix->nc[d] - 1 : c1[d];
		}
		total += (size_t)(c1[0] - c0[0] + 1) * (size_t)(c1[1] - c0[1] + 1) *
			 (size_t)(c1[2] - c0[2] + 1);
		if (total > INDEX_ENTRIES_MAX)
			return total;
		if (!fill)
			continue;
		/* obstacles in increasing order: each cell's list is sorted */
		for (z = c0[2]; z <= c1[2]; z++)
			for (y = c0[1]; y <= c1[1]; y++)
				for (x = c0[0]; x <= c1[0]; x++) {
					size_t k = ((size_t)z * (size_t)ix->nc[1] + (size_t)y) *
						   (size_t)ix->nc[0] + (size_t)x;

					if (fill == 1)
						ix->start[k + 1]++;
					else
						ix->item[ix->start[k]++] = (uint16_t)i;
				}
	}
	return total;
}

static struct obstacle_index *index_build(const struct obstacle *o, int n, int dims,
					  double reach)
{
	struct obstacle_index *ix = calloc(1, sizeof *ix);
	double (*blo)[3] = malloc((size_t)n * sizeof *blo);
	double (*bhi)[3] = malloc((size_t)n * sizeof *bhi);
	double *ext = malloc((size_t)n * sizeof *ext);
	double top[3] = {0, 0, 0}, vol = 1.0, h, w;
	size_t cells = 0, entries = 0, k;
	int i, d, tries;

	if (ix == NULL || blo == NULL || bhi == NULL || ext == NULL)
		goto fail;
	ix->n = n;
	ix->dims = dims;
	ix->box = malloc((size_t)n * sizeof *ix->box);
	if (ix->box == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		bbox(&o[i], dims, blo[i], bhi[i]);
		memcpy(ix->box[i][0], blo[i], sizeof ix->box[i][0]);
		memcpy(ix->box[i][1], bhi[i], sizeof ix->box[i][1]);
		for (d = 0; d < dims; d++)
			ix->scale = detmath_fmax(ix->scale, detmath_fmax(fabs(blo[i][d]), fabs(bhi[i][d])));
	}
	/* Queries of half-width up to reach (plus their margin, see
	 * obstacle_index_query) shrink to a point, which lies in one cell. The
	 * boxes get a margin of their own against the rounding of that. */
	ix->reach = reach * 1.001 + 2e-6 * (1.0 + ix->scale + reach);
	w = ix->reach + 1e-6 * (1.0 + ix->scale + reach);
	for (d = 0; d < 3; d++)
		ix->org[d] = top[d] = 0.0;
	for (i = 0; i < n; i++) {
		ext[i] = 0.0;
		for (d = 0; d < dims; d++) {
			blo[i][d] -= w;
			bhi[i][d] += w;
			ix->org[d] = i == 0 ? blo[i][d] : detmath_fmin(ix->org[d], blo[i][d]);
			top[d] = i == 0 ? bhi[i][d] : detmath_fmax(top[d], bhi[i][d]);
			ext[i] = detmath_fmax(ext[i], bhi[i][d] - blo[i][d]);
		}
	}
	/* Cells of half the typical widened box (each obstacle in about 2^dims
	 * to 3^dims cells, a cell seeing the obstacles within about 1.5 boxes),
	 * but no more cells than about 4 per obstacle over the whole extent. */
	qsort(ext, (size_t)n, sizeof *ext, cmp_double);
	for (d = 0; d < dims; d++)
		vol *= detmath_fmax(top[d] - ix->org[d], 1e-300);
	h = detmath_fmax(ext[n / 2] / 2.0, pow(vol / (4.0 * n), 1.0 / dims));
	for (tries = 0; tries < 200; tries++, h *= 1.5) {
		ix->inv_h = 1.0 / h;
		cells = 1;
		for (d = 0; d < 3; d++) {
			double t = d < dims ? (top[d] - ix->org[d]) * ix->inv_h : 0.0;

			ix->nc[d] = t < (double)INDEX_CELLS_MAX ? (int)t + 1 : INDEX_CELLS_MAX + 1;
			cells *= (size_t)ix->nc[d];
			if (cells > (size_t)INDEX_CELLS_MAX)
				break;
		}
		if (cells > (size_t)INDEX_CELLS_MAX)
			continue;
		entries = index_entries(ix, (const double (*)[3])blo, (const double (*)[3])bhi, 0);
		if (entries <= INDEX_ENTRIES_MAX)
			break;
	}
	if (tries == 200)
		goto fail;
	ix->start = calloc(cells + 1, sizeof *ix->start);
	ix->item = malloc((entries ? entries : 1) * sizeof *ix->item);
	if (ix->start == NULL || ix->item == NULL)
		goto fail;
	index_entries(ix, (const double (*)[3])blo, (const double (*)[3])bhi, 1);
	for (k = 0; k < cells; k++) /* counts to starts */
		ix->start[k + 1] += ix->start[k];
	index_entries(ix, (const double (*)[3])blo, (const double (*)[3])bhi, 2);
	for (k = cells; k > 0; k--) /* filling advanced each start to the next */
		ix->start[k] = ix->start[k - 1];
	ix->start[0] = 0;
	ix->cell_cost = 1.0 + (double)entries / (double)cells;
	free(blo);
	free(bhi);
	free(ext);
	return ix;
fail:
	free(blo);
	free(bhi);
	free(ext);
	obstacle_index_free(ix);
	return NULL;
}

struct obstacle_index *obstacle_index_build(const struct obstacle *o, int n, int dims,
					    double reach)
{
	if (n < OBSTACLE_INDEX_MIN || n > OBSTACLE_INDEX_MAX || dims < 2 || dims > 3 ||
	    !(reach >= 0.0) || !isfinite(reach))
		return NULL;
	return index_build(o, n, dims, reach);
}

/* Whether obstacle i's own box meets [ql, qh] (a query widened by its
 * margin). */
static inline int box_meets(const struct obstacle_index *ix, int i, const double ql[3],
			    const double qh[3])
{
	int d;

	for (d = 0; d < ix->dims; d++)
		if (ix->box[i][0][d] > qh[d] || ix->box[i][1][d] < ql[d])
			return 0;
	return 1;
}

/* The obstacles of cell k whose own box meets [ql, qh]: the cells list
 * every obstacle whose box, widened by reach, meets theirs, so also others
 * near the query; a few compares each spare them an exact test that could
 * only miss. A cell listing more than fit in buf: all of it. */
static int cell_query(const struct obstacle_index *ix, size_t k, const double ql[3],
		      const double qh[3], uint16_t buf[OBSTACLE_QUERY_MAX], const uint16_t **list)
{
	uint32_t e, e0 = ix->start[k], e1 = ix->start[k + 1];
	int m = 0;

	if (e1 - e0 > OBSTACLE_QUERY_MAX) {
		*list = ix->item + e0;
		return (int)(e1 - e0);
	}
	for (e = e0; e < e1; e++)
		if (box_meets(ix, ix->item[e], ql, qh))
			buf[m++] = ix->item[e];
	*list = buf;
	return m;
}

int obstacle_index_query(const struct obstacle_index *ix, const double lo[3],
			 const double hi[3], uint16_t buf[OBSTACLE_QUERY_MAX],
			 const uint16_t **list)
{
	uint64_t seen[OBSTACLE_INDEX_MAX / 64];
	double s, big, ql[3] = {0, 0, 0}, qh[3] = {0, 0, 0};
	int c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0}, d, i, x, y, z, w, words, m = 0;
	size_t ncell = 1;

	*list = NULL;
	if (ix == NULL)
		return -1;
	big = ix->scale;
	for (d = 0; d < ix->dims; d++) {
		double a = fabs(lo[d]), b = fabs(hi[d]);

		if (!isfinite(lo[d]) || !isfinite(hi[d]) || lo[d] > hi[d])
			return -1;
		/* fmax of finite, non-negative numbers, without its call */
		big = a > big ? a : big;
		big = b > big ? b : big;
	}
	/* A margin far above the rounding of the exact tests: a few units in
	 * the last place of the coordinates for distances, about 1e-8 of them
	 * for a move grazing a sphere (a square root of the rounding). Only a
	 * move along a segment's line and parallel to it to within rounding
	 * (the crossing test's denominator is then noise) could be "hit" by a
	 * segment that no margin covers. */
	s = 1e-6 * (1.0 + big);
	for (d = 0; d < ix->dims; d++) {
		ql[d] = lo[d] - s;
		qh[d] = hi[d] + s;
	}
	/* Nearly every query (radii.avoid about a boid, a step's move, a
	 * point) is at most reach wide with its margin: the cell of its
	 * midpoint, which the loop below would find at more cost. */
	for (d = 0; d < ix->dims; d++)
		if (!(hi[d] - lo[d] <= 2.0 * (ix->reach - s)))
			break;
	if (d == ix->dims) {
		size_t k = 0;

		for (d = ix->dims - 1; d >= 0; d--) {
			int c = cell_coord(ix, d, 0.5 * lo[d] + 0.5 * hi[d]);

			if (c < 0 || c >= ix->nc[d])
				return 0; /* outside every widened box */
			k = k * (size_t)ix->nc[d] + (size_t)c;
		}
		return cell_query(ix, k, ql, qh, buf, list);
	}
	for (d = 0; d < ix->dims; d++) {
		double l = ql[d], u = qh[d];

		/* Every box is widened by reach: the query shrinks by as much,
		 * to its midpoint when it is narrower. */
		if (u - l >= 2.0 * ix->reach && l + ix->reach <= u - ix->reach) {
			l += ix->reach;
			u -= ix->reach;
		} else {
			l = u = 0.5 * l + 0.5 * u;
		}
		c0[d] = cell_coord(ix, d, l);
		c1[d] = cell_coord(ix, d, u);
		if (c1[d] < 0 || c0[d] >= ix->nc[d])
			return 0; /* outside every widened box */
		c0[d] = c0[d] < 0 ? 0 : c0[d];
		c1[d] = c1[d] >= ix->nc[d] ? ix->nc[d] - 1 : c1[d];
		ncell *= (size_t)(c1[d] - c0[d] + 1);
	}
	if (ncell == 1)
		return cell_query(ix, ((size_t)c0[2] * (size_t)ix->nc[1] + (size_t)c0[1]) *
					      (size_t)ix->nc[0] + (size_t)c0[0],
				  ql, qh, buf, list);
	/* Over more cells than it has obstacles to look at (a long move in
	 * cells made small for radii.avoid), the boxes of every obstacle, in
	 * order. */
	if ((double)ncell * ix->cell_cost > (double)ix->n) {
		for (i = 0; i < ix->n; i++)
			if (box_meets(ix, i, ql, qh)) {
				if (m == OBSTACLE_QUERY_MAX)
					return -1;
				buf[m++] = (uint16_t)i;
			}
		*list = buf;
		return m;
	}
	/* Several cells: the union of their lists, in increasing order. */
	words = (ix->n + 63) / 64;
	memset(seen, 0, (size_t)words * sizeof *seen);
	for (z = c0[2]; z <= c1[2]; z++)
		for (y = c0[1]; y <= c1[1]; y++)
			for (x = c0[0]; x <= c1[0]; x++) {
				size_t k = ((size_t)z * (size_t)ix->nc[1] + (size_t)y) *
					   (size_t)ix->nc[0] + (size_t)x;
				uint32_t e;

				for (e = ix->start[k]; e < ix->start[k + 1]; e++)
					seen[ix->item[e] >> 6] |= UINT64_C(1) << (ix->item[e] & 63);
			}
	for (w = 0; w < words; w++) {
		uint64_t b = seen[w];

		while (b != 0) {
			i = w * 64 + __builtin_ctzll(b);
			b &= b - 1;
			if (!box_meets(ix, i, ql, qh))
				continue;
			if (m == OBSTACLE_QUERY_MAX)
				return -1;
			buf[m++] = (uint16_t)i;
		}
	}
	*list = buf;
	return m;
}
