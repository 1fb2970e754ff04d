/* A real redis-server for the C API tests: started on 127.0.0.1 at a free port with a password,
 * its files in a directory of the test's, killed by StopRedis (register it with atexit) and with
 * the test (PR_SET_PDEATHSIG). Needs _POSIX_C_SOURCE 200809L and the headers of c_api_test.c. */
#ifndef URLSIEVE_TESTS_C_API_REDIS_SERVER_H_
#define URLSIEVE_TESTS_C_API_REDIS_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t redis_pid = -1;

static void StopRedis(void) {
  if (redis_pid <= 0) return;
  kill(redis_pid, SIGKILL);
  waitpid(redis_pid, NULL, 0);
  redis_pid = -1;
}

static int FreePort(void) {
  struct sockaddr_in addr;
  socklen_t len = sizeof(addr);
  int port = 0;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr*)&addr, sizeof(addr)) == 0 &&
      getsockname(fd, (struct sockaddr*)&addr, &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* 1 once the server at `port` answers AUTH + PING with +PONG. */
static int RedisAnswers(int port, const char* password) {
  struct sockaddr_in addr;
  struct timeval timeout;
  char request[128];
  char reply[256];
  size_t got = 0;
  int ok = 0;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons((uint16_t)port);
  timeout.tv_sec = 1;
  timeout.tv_usec = 0;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  snprintf(request, sizeof(request), "AUTH %s\r\nPING\r\n", password);
  if (connect(fd, (struct sockaddr*)&addr, sizeof(addr)) == 0 &&
      write(fd, request, strlen(request)) == (ssize_t)strlen(request)) {
    while (got < sizeof(reply) - 1) {
      ssize_t n = read(fd, reply + got, sizeof(reply) - 1 - got);
      if (n <= 0) break;
      got += (size_t)n;
      reply[got] = '\0';
      if (strstr(reply, "+PONG\r\n") != NULL) {
        ok = 1;
        break;
      }
    }
  }
  close(fd);
  return ok;
}

/* Starts redis-server with its files in `dir`; returns its port, or 0 (said on stderr). */
static int StartRedis(const char* dir, const char* password) {
  int attempt;
  for (attempt = 0; attempt < 8; ++attempt) {
    char port_arg[16];
    char log[600];
    double deadline = Now() + 20;
    int port = FreePort();
    snprintf(port_arg, sizeof(port_arg), "%d", port);
    snprintf(log, sizeof(log), "%s/redis.log", dir);
    redis_pid = fork();
    if (redis_pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
      execlp("redis-server", "redis-server", "--port", port_arg, "--bind", "127.0.0.1", "--dir",
             dir, "--save", "", "--appendonly", "no", "--logfile", log, "--requirepass", password,
             "--daemonize", "no", (char*)NULL);
      _exit(127);
    }
    while (Now() < deadline) {
      struct timespec pause = {0, 10 * 1000 * 1000};
      if (waitpid(redis_pid, NULL, WNOHANG) == redis_pid) { /* exited: the port was taken */
        redis_pid = -1;
        break;
      }
      if (RedisAnswers(port, password)) return port;
      nanosleep(&pause, NULL); /* polling for readiness, up to the deadline */
    }
    StopRedis();
  }
  fprintf(stderr, "could not start redis-server in %s (scripts/setup.sh installs it)\n", dir);
  return 0;
}

#endif /* URLSIEVE_TESTS_C_API_REDIS_SERVER_H_ */
