/* The pod sandbox's "pause" process for the cluster test tier: holds the pod's
 * namespaces, reaps orphans, exits on SIGTERM/SIGINT. Built static so the image
 * needs nothing else (there is no image registry to pull k8s.gcr.io/pause from). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) { (void)sig; _exit(0); }
static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  signal(SIGTERM, on_stop);
  signal(SIGINT, on_stop);
  signal(SIGCHLD, on_child);
  for (;;) pause();
}
