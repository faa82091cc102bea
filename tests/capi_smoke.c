/* Copyright dist-train authors. SPDX-License-Identifier: MIT
 *
 * A plain C99 program against the installed dist_train/dist_train.h and
 * libdist-train.so (tests/install.bats builds it with -std=c99 -pedantic
 * -Werror): one rank, everything from the environment. Prints what it did;
 * exits 0 when every call behaved. */
#include <dist_train/dist_train.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                 \
  do {                                                              \
    int rc_ = (call);                                               \
    if (rc_ != DT_OK) {                                             \
      fprintf(stderr, "%s: %s: %s\n", #call, dt_code_name(rc_),     \
              dt_last_error());                                     \
      return 1;                                                     \
    }                                                               \
  } while (0)

int main(void) {
  dt_env env;
  dt_comm *comm = NULL;
  float grad[3] = {1.0f, 2.0f, 3.0f};
  char how[64];
  int stop = 0;

  CHECK(dt_install_stop_handler(SIGUSR1));
  CHECK(dt_env_read(&env));
  CHECK(dt_comm_create(&comm));
  CHECK(dt_comm_all_reduce(comm, grad, grad, 3, DT_FLOAT32, DT_SUM));
  dt_comm_describe(comm, how, sizeof(how));
  raise(SIGUSR1);
  CHECK(dt_agree_to_stop(comm, &stop));
  if (dt_comm_all_reduce(comm, grad, grad, 3, 42, DT_SUM) !=
      DT_INVALID_ARGUMENT) {
    return 1;
  }
  printf("api %d, rank %d of %d, %s, sum %g, stop %d, error '%s'\n",
         dt_api_version(), env.rank, dt_comm_size(comm), how, grad[2], stop,
         dt_last_error());
  dt_comm_destroy(comm);
  return strlen(dt_version()) > 0 ? 0 : 1;
}
