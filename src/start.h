/* start.h: a flock's start read from a file (start.file): a frame of a
 * boidsim trajectory (.bin, .csv, .csv.gz), or a plain CSV of positions
 * and velocities. */
#ifndef BOIDSIM_START_H
#define BOIDSIM_START_H

#include "scenario.h"
#include "util.h"

/* Reads sc->start_file (when set) into sc->start_data, checked against
 * the scenario: the dimensions, the count, finite values, positions in
 * the box under wrap and reflect, none inside an obstacle, speeds within
 * the model's range. Returns 0, or -1 with one line in err (a scenario
 * error: the caller exits 2). */
int start_load(struct scenario *sc, struct util_err *err);

#endif
