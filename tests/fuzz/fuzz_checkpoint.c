/* fuzz_checkpoint.c: libFuzzer target for the checkpoint reader. The input
 * bytes are a checkpoint file. The run it is read into is the one its own
 * embedded scenario describes (when that loads, holds at most a few hundred
 * boids and starts from no file; else a fixed small one), with its own
 * generator when that names a boidsim, so that mutations get past the
 * scenario and version checks to the files and the state; its CRC is
 * tried as it is, then made right. A refused checkpoint must get one line
 * naming the file; an accepted one must hold a state the run can be in
 * (sim_check), its names must pass or fail checkpoint_files_check with one
 * line, and the run must go on from it for a few steps without a crash or
 * undefined behaviour. Built and run by .ci/run (the engine's sources
 * but main.c and cmd_traj.c, with -lz -lcrypto -lcjson -lm). */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz_common.h"
#include "fuzz_run.h"
#include "checkpoint.h"
#include "sim.h"
#include "traj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* -DFUZZ_DEBUG: each input's verdict on stderr, to see how far the seed
 * corpus gets (every seed should be read). */
#ifdef FUZZ_DEBUG
#define verdict(...) fprintf(stderr, "fuzz_checkpoint: " __VA_ARGS__)
#else
#define verdict(...) ((void)0)
#endif

static char path[64];

static void remove_input(void)
{
	unlink(path);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* checkpoint_peek of the file at path: one line when it fails, and, when
 * checkpoint_read accepted the file (read: its files), the same names. */
static void check_peek(const struct checkpoint_files *read)
{
	struct checkpoint_files pf;
	struct util_err err;

	if (checkpoint_peek(path, &pf, &err) != 0) {
		fuzz_check_error(&err, path);
		if (read) {
			fprintf(stderr, "fuzz: checkpoint_read accepts what checkpoint_peek refuses: "
				"%s\n", err.msg);
			abort();
		}
		return;
	}
	if (read && !(same_str(pf.output, read->output) &&
		      same_str(pf.output_tmp, read->output_tmp) &&
		      same_str(pf.metrics, read->metrics) &&
		      same_str(pf.metrics_tmp, read->metrics_tmp))) {
		fprintf(stderr, "fuzz: checkpoint_peek and checkpoint_read name other files\n");
		abort();
	}
	checkpoint_files_free(&pf);
}

static void check_read(const uint8_t *data, size_t size, const char *json_in,
		       const char *gen_in)
{
	struct scenario sc;
	struct sim sim;
	struct checkpoint_files files;
	struct util_err err;
	char *json, generator[256];
	const char *out, *met;
	int k, rc;

	fuzz_run_scenario(json_in, &sc);
	if (sim_init(&sim, &sc, SIM_GRID, NULL, &err) != 0) {
		scenario_free(&sc);
		return;
	}
	if (!(json = scenario_to_json(&sc)))
		abort();
	fuzz_generator(gen_in, generator, sizeof generator);

	/* as it is: a wrong CRC is refused before anything else is read */
	if (fuzz_write_file(path, data, size) != 0)
		goto out;
	rc = checkpoint_read(path, &sim, json, generator, &files, &err);
	check_peek(rc == 0 ? &files : NULL);
	if (rc != 0) {
		fuzz_check_error(&err, path);
		verdict("as it is: %s\n", err.msg);
		if (size < 12 || traj_get_u32(data + size - 4) ==
				 (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), data, size - 4))
			goto out;
		/* then with its CRC made right */
		{
			unsigned char *fixed = malloc(size);

			if (fixed == NULL)
				goto out;
			memcpy(fixed, data, size);
			traj_put_u32(fixed + size - 4,
				     (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), fixed, size - 4));
			rc = fuzz_write_file(path, fixed, size);
			free(fixed);
		}
		if (rc != 0)
			goto out;
		rc = checkpoint_read(path, &sim, json, generator, &files, &err);
		check_peek(rc == 0 ? &files : NULL);
		if (rc != 0) {
			verdict("%s\n", err.msg);
			fuzz_check_error(&err, path);
			goto out;
		}
	}
	verdict("read, step %llu, %zu boids\n", (unsigned long long)sim.step, sim.flock.n);
	if (sim_check(&sim, &err) != 0) {
		fprintf(stderr, "fuzz: an accepted checkpoint holds a state no run is in: %s\n",
			err.msg);
		abort();
	}
	/* its own names, then others: one line either way */
	out = files.output && files.output[0] ? files.output : NULL;
	met = files.metrics && files.metrics[0] ? files.metrics : NULL;
	if (checkpoint_files_check(path, &files, out, met, &err) != 0)
		fuzz_check_error(&err, path);
	if (checkpoint_files_check(path, &files, "out.bin", NULL, &err) != 0)
		fuzz_check_error(&err, path);
	checkpoint_files_free(&files);
	for (k = 0; k < 3 && sim.step < sc.steps; k++)
		sim_step(&sim);
out:
	free(json);
	sim_free(&sim);
	scenario_free(&sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t at = FUZZ_CKPT_STRINGS;
	char *json = NULL, *gen = NULL;

	if (size > (1u << 20))
		return 0;
	if (!path[0]) {
		int fd;

		snprintf(path, sizeof path, "/tmp/fuzz_checkpoint.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			return 0;
		close(fd);
		atexit(remove_input);
	}
	if ((json = fuzz_ckpt_string(data, size, &at)) != NULL)
		gen = fuzz_ckpt_string(data, size, &at);
	check_read(data, size, json, gen);
	free(json);
	free(gen);
	return 0;
}
