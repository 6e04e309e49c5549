/* scenario.h: the validated scenario (the user contract) and its JSON form. */
#ifndef BOIDSIM_SCENARIO_H
#define BOIDSIM_SCENARIO_H

#include <stdint.h>
#include "util.h"

/* Largest magnitude accepted for any length, speed, weight or time step.
 * The engine computes in binary32; squared distances of 1e9-sized lengths
 * (1e18) stay far inside its range, so no valid scenario can overflow. */
#define SCENARIO_VALUE_MAX 1e9
/* The largest integer a JSON number may give (steps, every, seed, event and
 * stage steps): below 2^53 every integer text reads as itself, while
 * 9007199254740993 would read as 2^53. */
#define SCENARIO_INT_MAX ((UINT64_C(1) << 53) - 1)
/* Smallest positive value of a key that must be greater than 0 (a radius,
 * a speed, a time step): the engine squares lengths in binary32, whose
 * squares of values below about 1e-19 underflow to 0 or to subnormals. */
#define SCENARIO_VALUE_MIN 1e-15
/* How far from the origin an unbounded flock may be able to travel. */
#define SCENARIO_REACH_MAX 1e18
/* Largest scenario file read, so hostile input cannot exhaust memory. */
#define SCENARIO_FILE_MAX (16u << 20)
/* Boid ids are 32-bit in the trajectory formats. */
#define SCENARIO_COUNT_MAX 4294967295u
/* Planning figure for memory checks before allocation (see flock.c). */
#define SCENARIO_BYTES_PER_BOID 160u
/* What a hue adds: its unit vector (two binary32) and the next one; with
 * a colour velocity (hue.alignment or hue.spin) also its rate and the next. */
#define SCENARIO_HUE_BYTES_PER_BOID 16u
#define SCENARIO_SPIN_BYTES_PER_BOID 8u

enum bounds_mode { BOUNDS_WRAP = 0, BOUNDS_REFLECT, BOUNDS_STEER, BOUNDS_NONE };

/* The models of collective motion (boidsim-scenario(5), THE MODELS). */
enum model_kind {
	MODEL_REYNOLDS = 0, MODEL_SIMPLE, MODEL_VICSEK, MODEL_COUZIN,
	/* The update rules of four of the seed programs (boidsim-scenario(5),
	 * THE MODELS; docs/SEEDS.md): unit-direction blending at constant
	 * speed, slerp turning with speed averaging, direction inertia, and
	 * direct accelerations. */
	MODEL_BLEND, MODEL_SLERP, MODEL_INERTIA, MODEL_ACCELERATE
};
#define SCENARIO_MODELS 8

/* Where the boids start (start.shape): uniform in a box, uniform in a
 * ball (a disc in 2D), or all at one point. */
enum start_shape { START_BOX = 0, START_BALL, START_POINT };
#define SCENARIO_NOTES_MAX 16

#define SCENARIO_ATTRACTORS_MAX 64
#define SCENARIO_WAYPOINTS_MAX 1024
#define SCENARIO_STAGES_MAX 1024

/* A point that attracts (strength > 0) or repels (< 0) boids within range;
 * fixed (one point) or moving linearly between waypoints. */
struct scenario_attractor {
	double strength, range;
	int n_points;
	uint64_t *steps;          /* n_points, increasing; [0] = 0 when fixed */
	double (*pos)[3];
};

/* Predators (boidsim-scenario(5), PREDATORS): how each chooses its quarry. */
enum predator_chase { PREDATOR_NEAREST = 0, PREDATOR_CENTRE };
#define SCENARIO_PREDATORS_MAX 1024

/* The population schedule: at a step, boids added in a region (with new
 * ids) or removed (the highest ids first, in a region when one is given);
 * or disabled as removed but kept aside with their state, and enabled
 * again, the last disabled first (the OpenGL program's count slider). */
#define SCENARIO_EVENTS_MAX 1024
enum scenario_event_kind { EVENT_ADD = 0, EVENT_REMOVE, EVENT_DISABLE, EVENT_ENABLE };
struct scenario_event {
	uint64_t step;
	enum scenario_event_kind kind;
	uint64_t n;               /* add n boids; remove, disable, enable up to n */
	int has_region;
	double rmin[3], rmax[3];  /* the region; the bounds box when none */
};

struct scenario_stage;
struct obstacle;
#define SCENARIO_OBSTACLES_MAX 4096

struct scenario {
	int dims;                 /* 2 or 3 */
	uint64_t count;
	uint64_t steps;
	double dt;
	uint64_t seed;
	double r_sep, r_ali, r_coh;
	double w_sep, w_ali, w_coh, w_target, w_bounds;
	double speed_min, speed_max;
	double max_force;
	double bmin[3], bmax[3];
	enum bounds_mode mode;
	double margin;
	int has_target;
	double target[3];
	uint64_t every;
	int compression;          /* the compressor's level of binary frames, 0 = stored */
	int compressor;           /* enum traj_compressor */
	double precision;         /* output.precision of lossy binary frames; 0 = lossless */
	char *description;        /* free text, may be NULL */
	enum model_kind model;
	double noise;             /* radians: Vicsek's eta (full width), Couzin's sigma */
	int move_new;             /* move_with "new_velocity": Vicsek's particles move with v(t+1) */
	double view_angle;        /* degrees, (0, 360]; 360 sees all round */
	double max_turn;          /* degrees per unit time; 0 = unlimited */
	double speed_variation;   /* per-boid cruise speed spread, [0, 1) */
	double speed_noise_amp;   /* smooth per-boid speed fluctuation, [0, 1) */
	double speed_noise_period;
	double target_radius;     /* the target pulls only beyond this distance */
	int has_wander;           /* the target jumps within a region */
	double wander_min[3], wander_max[3], wander_interval;
	int n_attractors;
	struct scenario_attractor *attractors;
	/* Solid obstacles (polylines expanded into segments), avoided within
	 * radii.avoid with weight weights.avoid, never passed through. */
	int n_obstacles;
	struct obstacle *obstacles;
	struct obstacle_index *obstacle_index; /* theirs, or NULL (obstacles.h) */
	double r_avoid, w_avoid;
	/* Colour following: each boid's hue turns toward its neighbours'
	 * within r_hue at rate hue_weight per unit time; written to the
	 * trajectory as an extra field. */
	int has_hue;
	double hue_weight, r_hue;
	/* The JavaFX report's colour vector with a velocity of its own (on
	 * with hue.alignment or hue.spin): hue_weight is then the colour
	 * cohesion's weight in the colour's acceleration, hue_alignment the
	 * colour alignment's, and the rates start uniform in
	 * [hue_spin_lo, hue_spin_hi] turns per unit time (rules.c). */
	int hue_spin_on;
	double hue_alignment, hue_spin_lo, hue_spin_hi;
	/* Predators: n_predators agents (0: none) moving at pred_speed,
	 * turning at most pred_max_turn degrees per unit time (0: at once),
	 * chasing the nearest boid within pred_range or the flock's centre;
	 * they start uniform in the region pred_min..pred_max. Boids within
	 * r_flee of one flee it with weight w_flee. */
	int n_predators;
	enum predator_chase pred_chase;
	double pred_speed, pred_range, pred_max_turn;
	double pred_min[3], pred_max[3];
	double r_flee, w_flee;
	/* The population schedule, in order of step (events of one step in
	 * the order given). capacity: the most boids alive at once, were every
	 * removal in a region to remove none; ids_total: ids ever given. */
	int n_events;
	struct scenario_event *events;
	uint64_t capacity, ids_total;
	uint64_t park_max;        /* the most boids disabled at once (a bound) */
	/* The parameter schedule: stage k's parameters apply from its step on
	 * (the state at step+1 is the first computed with them). */
	int n_stages;
	struct scenario_stage *stages;
	char *schedule_json;      /* the schedule as given, for the effective scenario */
	/* The return rule (return): beyond radius from center, a boid heads
	 * back toward it (blend: a weighted term; slerp: a turn back). */
	int has_return;
	double return_center[3], return_radius, w_return;
	/* Turn rate per unit time (turn_rate): slerp's fraction of the turn
	 * per unit time, inertia's rotation speed. */
	double turn_rate;
	/* The start (start): the region the positions are drawn in, the
	 * heading (uniform without one; spread: the slerp fraction from it
	 * toward a uniformly random rotation), and the speeds (uniform in
	 * [start_speed_lo, start_speed_hi]: speed.min and speed.max unless
	 * start.speed is given). */
	int has_start;            /* the key was given */
	enum start_shape start_shape;
	double start_min[3], start_max[3], start_center[3], start_radius;
	int has_start_heading;
	double start_heading[3], start_spread;
	double start_speed_lo, start_speed_hi;
	/* Or from a file (start.file, its path as resolved; start.step, the
	 * frame's step, UINT64_MAX for the last): start_load (start.h) reads
	 * it into start_data, count x start_fields floats, field after field
	 * (positions, velocities, and the hue in turns when both the file and
	 * the scenario have one), in id order. */
	char *start_file;
	uint64_t start_step;
	int start_fields, start_hue;
	float *start_data;
	/* Keys given that the model does not use, one note each, for the
	 * caller to report (a sweep over such a key would change nothing). */
	char *notes[SCENARIO_NOTES_MAX];
	int n_notes;
};

struct scenario_stage {
	uint64_t step;
	struct scenario sc;       /* the whole scenario as it is from step on */
};

/* A command-line override "dotted.path=value"; value is JSON, or a bare
 * string when it does not parse as JSON. */
struct scenario_override {
	const char *text;
	const char *label; /* how messages name it; NULL: "--set TEXT" */
};

/* Loads, overrides and validates. name is used in messages ("-" reads
 * stdin and is shown as "<stdin>"). Returns 0, or -1 with one line in err. */
int scenario_load_file(const char *name, const struct scenario_override *ov,
		       int n_ov, struct scenario *sc, struct util_err *err);
int scenario_load_string(const char *name, const char *text, size_t len,
			 const struct scenario_override *ov, int n_ov,
			 struct scenario *sc, struct util_err *err);

/* The effective scenario with every default filled in, as formatted JSON;
 * loading it again yields the same struct. Caller frees with free(). */
char *scenario_to_json(const struct scenario *sc);

void scenario_free(struct scenario *sc);

const char *scenario_mode_name(enum bounds_mode m);
const char *scenario_model_name(enum model_kind m);

/* The population schedule at a step, every event up to it applied: the ids
 * given so far (the next id), the most boids there can be alive and the
 * most there can be disabled. */
void scenario_population_at(const struct scenario *sc, uint64_t step, uint64_t *ids,
			    uint64_t *most, uint64_t *parked);

/* The key of an event kind in the scenario ("add", "remove", ...). */
const char *scenario_event_name(enum scenario_event_kind k);

/* The largest interaction radius, which sets the grid's cell size (the
 * hue's radius is at most this). */
double scenario_max_radius(const struct scenario *sc);

#endif
