/* Copyright dist-train authors. SPDX-License-Identifier: MIT
 *
 * The C API of libdist-train: the same runtime as the C++ API
 * (dist_train/runtime.h, dist_train/preemption.h) for C programs and for
 * other languages' foreign-function interfaces (the Python package
 * `dist_train` is ctypes over this header). Plain C99, no C++ types.
 *
 *   dt_comm *comm;
 *   if (dt_install_stop_handler(0) != DT_OK ||
 *       dt_comm_create(&comm) != DT_OK) {
 *     fprintf(stderr, "%s\n", dt_last_error());
 *     return 1;
 *   }
 *   dt_comm_all_reduce(comm, grad, grad, n, DT_FLOAT32, DT_SUM);
 *
 * Errors: every function that can fail returns a dt_code (DT_OK = 0). The
 * message of the calling thread's last failure (it names what was wrong
 * and where, as the C++ Status does) is dt_last_error(); it stays valid
 * until this thread's next failing call. Nothing here throws, exits or
 * prints. Pointers that are documented as outputs may not be NULL.
 *
 * Versioning: symbols are only ever added; DT_API_VERSION grows with each
 * addition, and dt_api_version() says what the loaded library provides.
 */
#ifndef DIST_TRAIN_DIST_TRAIN_H_
#define DIST_TRAIN_DIST_TRAIN_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define DT_C_EXPORT __attribute__((visibility("default")))
#else
#define DT_C_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DT_API_VERSION 3

/* ---- errors and versions ------------------------------------------------ */

/* The codes of dist_train::Status::Code, same order. */
typedef enum {
  DT_OK = 0,
  DT_INVALID_ARGUMENT = 1,  /* bad user/admin/environment input */
  DT_NOT_FOUND = 2,         /* a required value or resource is missing */
  DT_IO_ERROR = 3,          /* a system call failed */
  DT_UNAVAILABLE = 4,       /* a peer or service cannot be reached (yet) */
  DT_TIMEOUT = 5,           /* a deadline passed */
  DT_PERMISSION_DENIED = 6, /* authentication/authorisation, or a limit */
  DT_INTERNAL = 7           /* a bug in dist-train */
} dt_code;

/* The calling thread's last error message ("" when there was none). */
DT_C_EXPORT const char* dt_last_error(void);
/* A fixed name for a code, as in dist_train::Status::ToString: "OK",
 * "Invalid argument", ...; "Unknown" for a value that is not a dt_code. */
DT_C_EXPORT const char* dt_code_name(int code);
/* The library's DT_API_VERSION and package version (e.g. "0.1.0"). */
DT_C_EXPORT int dt_api_version(void);
DT_C_EXPORT const char* dt_version(void);

/* ---- the environment contract ------------------------------------------- */

/* What this process was started with, read by the strict environment
 * reader (a bad value is an error naming the variable, never a default).
 * Integer fields are -1 when their variables are unset. */
typedef struct {
  int rank;             /* RANK, else SLURM_PROCID */
  int world_size;       /* WORLD_SIZE, else SLURM_STEP_NUM_TASKS, NTASKS */
  int local_rank;       /* LOCAL_RANK, else SLURM_LOCALID */
  int local_world_size; /* LOCAL_WORLD_SIZE */
  int node_rank;        /* NODE_RANK, else SLURM_NODEID */
  int master_port;      /* MASTER_PORT */
  /* MASTER_ADDR ("" when unset; one that does not fit is an error) */
  char master_addr[256];
  int64_t job_id;        /* SLURM_JOB_ID */
  int64_t restart_count; /* SLURM_RESTART_COUNT (0 when unset in a job) */
  int64_t deadline;      /* DT_JOB_DEADLINE, Unix seconds; -1: no limit */
} dt_env;

DT_C_EXPORT int dt_env_read(dt_env* out);

/* ---- communicator -------------------------------------------------------- */

typedef struct dt_comm dt_comm;

typedef enum {
  DT_FLOAT32 = 0,
  DT_FLOAT64 = 1,
  DT_INT32 = 2,
  DT_INT64 = 3,
  DT_BFLOAT16 = 4,
  DT_FLOAT16 = 5
} dt_dtype;

typedef enum { DT_SUM = 0, DT_MIN = 1, DT_MAX = 2, DT_AVG = 3 } dt_op;

/* Size in bytes of one element; 0 for an unknown type. */
DT_C_EXPORT size_t dt_dtype_size(int dtype);

/* Rendezvous with every rank, everything from the environment (as
 * dist_train::Options{} in C++). *out is NULL on failure. */
DT_C_EXPORT int dt_comm_create(dt_comm** out);
/* Ends this rank's membership; NULL is ignored. */
DT_C_EXPORT void dt_comm_destroy(dt_comm* comm);
/* -1 for NULL. */
DT_C_EXPORT int dt_comm_rank(const dt_comm* comm);
DT_C_EXPORT int dt_comm_size(const dt_comm* comm);
/* How collectives travel, e.g. "shared memory (4 ranks)"; copied into
 * buf (always NUL-terminated; buf may be NULL when size is 0); returns the
 * full length, as snprintf ("" and 0 for a NULL comm). */
DT_C_EXPORT size_t dt_comm_describe(const dt_comm* comm, char* buf,
                                    size_t size);

/* Host buffers; `count` elements; in place when send == recv. A NULL
 * comm or (with count > 0) buffer, or a dtype or op that is not one of the
 * enums, is DT_INVALID_ARGUMENT naming it. A communicator is used by one
 * thread at a time. */
DT_C_EXPORT int dt_comm_all_reduce(dt_comm* comm, const void* send, void* recv,
                                   size_t count, int dtype, int op);
DT_C_EXPORT int dt_comm_broadcast(dt_comm* comm, void* buf, size_t count,
                                  int dtype, int root);
/* recv holds size * count elements, rank r's at r * count. */
DT_C_EXPORT int dt_comm_all_gather(dt_comm* comm, const void* send, void* recv,
                                   size_t count, int dtype);
/* send holds size * count elements; recv gets this rank's reduced slice. */
DT_C_EXPORT int dt_comm_reduce_scatter(dt_comm* comm, const void* send,
                                       void* recv, size_t count, int dtype,
                                       int op);
DT_C_EXPORT int dt_comm_barrier(dt_comm* comm);

/* ---- preemption ---------------------------------------------------------- */

/* The exit status of a worker that stopped for preemption (EX_TEMPFAIL). */
#define DT_PREEMPTED_EXIT_CODE 75

/* A handler for `signal` (0: DT_PREEMPT_SIGNAL, else SIGUSR1) that only
 * sets a flag, installed with SA_RESTART: safe as a program's first call,
 * and system calls it interrupts are restarted. */
DT_C_EXPORT int dt_install_stop_handler(int signal);
/* 1 when the stop signal came (or dt_request_stop was called), else 0. */
DT_C_EXPORT int dt_stop_requested(void);
DT_C_EXPORT void dt_request_stop(void);
DT_C_EXPORT void dt_clear_stop_request(void);
/* Collective: *stop is 1 on every rank when any rank has a request. */
DT_C_EXPORT int dt_agree_to_stop(dt_comm* comm, int* stop);
/* Seconds until the job's time limit (live from slurmctld, else
 * DT_JOB_DEADLINE). DT_NOT_FOUND outside a job or without a limit. */
DT_C_EXPORT int dt_seconds_left(int64_t* seconds);
/* Requeues this job (array task) through libslurm. DT_PERMISSION_DENIED
 * once SLURM_RESTART_COUNT reached max_requeues (< 0: DT_MAX_REQUEUES,
 * unlimited when unset). */
DT_C_EXPORT int dt_requeue(int max_requeues);

/* ---- hang watchdog (API 2) ----------------------------------------------
 *
 * With DT_WATCHDOG=SECONDS (--dist-train=watchdog=SECONDS), a process of
 * the worker's own watches its progress: every collective counts, and
 * dt_heartbeat() for work between them. No progress for SECONDS: stacks of
 * every rank go into the step's watchdog directory, rank 0 prints one
 * summary naming the ranks that did not progress, and every worker is
 * killed (docs/runtime.md, "Hang watchdog"). dt_comm_create starts it. */

/* Starts the watchdog when DT_WATCHDOG is set (DT_OK and nothing when it
 * is not; again: DT_OK). Errors name the bad variable or directory. */
DT_C_EXPORT int dt_watchdog_start(void);
/* 1 while this process has a watchdog, else 0. */
DT_C_EXPORT int dt_watchdog_running(void);
/* One unit of progress (e.g. one training step); cheap, thread-safe. */
DT_C_EXPORT void dt_heartbeat(void);
/* The signal the watchdog sends for a stack dump, and the file descriptor
 * the dump is read from (-1 without a watchdog); a handler of one's own,
 * such as Python's faulthandler, may be registered on them. */
DT_C_EXPORT int dt_watchdog_dump_signal(void);
DT_C_EXPORT int dt_watchdog_dump_fd(void);
/* (API 3) Compute time the caller measured itself, in nanoseconds (e.g.
 * one forward pass). The watchdog's straggler report compares compute time
 * per step across ranks: by default the time outside collectives; once a
 * program reports any, what it reports (docs/runtime.md, "Stragglers"). */
DT_C_EXPORT void dt_note_compute_ns(uint64_t nanoseconds);

/* ---- checkpoints: files the caller writes itself ------------------------
 *
 * The commit protocol of dist_train::SaveCheckpoint for files written by
 * other code (torch.save):
 *
 *   dt_checkpoint *ck;
 *   dt_checkpoint_begin(dir, step, rank, &ck);  // dir/step-N, a temp file
 *   write(dt_checkpoint_path(ck))               // truncate and write it
 *   dt_checkpoint_commit(ck, comm);             // collective
 *   dt_checkpoint_free(ck);
 *
 * commit = dt_checkpoint_finish (fsync, rename to dir/step-N/rank-R.bin,
 * fsync the directory), then every rank learns whether all succeeded, then
 * rank 0 dt_checkpoint_mark_complete (dir/LATEST, atomic). Code with its
 * own collectives (torch.distributed) calls those two itself. Directories
 * are made 0700, files 0600; dir must be this user's, not a symlink, not
 * writable by others (as SaveCheckpoint). */
typedef struct dt_checkpoint dt_checkpoint;

DT_C_EXPORT int dt_checkpoint_begin(const char* dir, uint64_t step, int rank,
                                    dt_checkpoint** out);
/* The temp file to write (valid until dt_checkpoint_free). */
DT_C_EXPORT const char* dt_checkpoint_path(const dt_checkpoint* ck);
/* This rank's file is durable under its final name. */
DT_C_EXPORT int dt_checkpoint_finish(dt_checkpoint* ck);
/* finish + agreement + mark on rank 0 + barrier. DT_UNAVAILABLE when
 * another rank failed (nothing marked). */
DT_C_EXPORT int dt_checkpoint_commit(dt_checkpoint* ck, dt_comm* comm);
/* Removes an unfinished temp file; NULL is ignored. */
DT_C_EXPORT void dt_checkpoint_free(dt_checkpoint* ck);
/* Marks `step` complete: call once (rank 0), after every rank finished. */
DT_C_EXPORT int dt_checkpoint_mark_complete(const char* dir, uint64_t step);
/* The latest complete step and this rank's file of it, opened read-only
 * (O_NOFOLLOW, O_CLOEXEC, checked regular and this user's): the caller
 * closes *fd. DT_NOT_FOUND when no step is complete; DT_INVALID_ARGUMENT
 * when the complete step has no file of this rank. */
DT_C_EXPORT int dt_checkpoint_open_latest(const char* dir, int rank,
                                          uint64_t* step, int* fd);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DIST_TRAIN_DIST_TRAIN_H_ */
