// bench_machine: what this machine charges for the kernel entries and switches that the
// server's figures depend on, so that runs on different VMs can be told apart
// (docs/benchmarks.md, "Machine"):
//   - a system call (getppid), alone;
//   - a round trip through two pipes between two threads of one process, and between two
//     processes, all on one CPU: two switches and four system calls each; the difference
//     is what switching address spaces adds;
//   - random 8-byte reads over a buffer of 4 KB pages (no huge pages), alone and with a
//     system call every 16 reads: what a kernel entry costs a process that reads memory
//     at random, beyond the call itself (the TLB it has to refill).
// Without PCID a kernel with page-table isolation flushes the TLB on every entry.
//
//   build/bench/bench_machine [--cpu N] [--mb MB]     (defaults: CPU 1, 64 MB)
//
// Prints one line per figure, and the CPU flags that decide them (pcid, pti).
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
}

double syscall_ns(long n) {
  const double t0 = seconds_now();
  for (long i = 0; i < n; ++i) ::syscall(SYS_getppid);
  return (seconds_now() - t0) * 1e9 / static_cast<double>(n);
}

int to_echo[2], from_echo[2];
constexpr long round_trips = 100000;

void* echo(void*) {
  char c;
  for (long i = 0; i < round_trips; ++i)
    if (::read(to_echo[0], &c, 1) != 1 || ::write(from_echo[1], &c, 1) != 1) break;
  return nullptr;
}

// Microseconds per round trip with the echo side in a thread or in a child process.
double round_trip_us(bool threads) {
  if (::pipe(to_echo) != 0 || ::pipe(from_echo) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  pthread_t t{};
  pid_t child = 0;
  if (threads) {
    pthread_create(&t, nullptr, echo, nullptr);
  } else if ((child = ::fork()) == 0) {
    echo(nullptr);
    ::_exit(0);
  }
  char c = 'x';
  const double t0 = seconds_now();
  for (long i = 0; i < round_trips; ++i)
    if (::write(to_echo[1], &c, 1) != 1 || ::read(from_echo[0], &c, 1) != 1) break;
  const double us = (seconds_now() - t0) * 1e6 / round_trips;
  if (threads)
    pthread_join(t, nullptr);
  else
    ::waitpid(child, nullptr, 0);
  for (int fd : {to_echo[0], to_echo[1], from_echo[0], from_echo[1]}) ::close(fd);
  return us;
}

// Nanoseconds per random read over `buf`, with a system call every `every` reads (0: none).
double read_ns(const unsigned char* buf, std::size_t size, int every, std::uint64_t& sink) {
  constexpr long reads = 10000000;
  std::uint64_t x = 88172645463325252ull;
  const std::size_t lines = size / 64;
  const double t0 = seconds_now();
  for (long i = 0; i < reads; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    sink += buf[(x % lines) * 64];
    if (every != 0 && i % every == 0) ::syscall(SYS_getppid);
  }
  return (seconds_now() - t0) * 1e9 / reads;
}

std::string cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    std::string w, out;
    bool pcid = false, pti = false;
    while (words >> w) {
      pcid = pcid || w == "pcid";
      pti = pti || w == "pti";
    }
    return std::string("pcid ") + (pcid ? "yes" : "no") + ", pti " + (pti ? "yes" : "no");
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  int cpu = 1;
  std::size_t mb = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--cpu") == 0)
      cpu = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--mb") == 0)
      mb = static_cast<std::size_t>(std::atol(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: bench_machine [--cpu N] [--mb MB]\n");
      return 2;
    }
  }
  pin(cpu);  // the child and the thread inherit it
  std::printf("cpu %d; %s\n", cpu, cpu_flags().c_str());
  std::printf("system call (getppid): %.0f ns\n", syscall_ns(1000000));
  const double threads = round_trip_us(true), processes = round_trip_us(false);
  std::printf("pipe round trip on one CPU, 2 switches and 4 system calls: threads %.2f us, processes %.2f us\n",
              threads, processes);

  const std::size_t size = mb << 20;
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  ::madvise(p, size, MADV_NOHUGEPAGE);
  std::memset(p, 1, size);
  std::uint64_t sink = 0;
  const auto* buf = static_cast<const unsigned char*>(p);
  const double alone = read_ns(buf, size, 0, sink);
  const double with = read_ns(buf, size, 16, sink);
  const double call = syscall_ns(1000000);
  std::printf("random reads over %zu MB of 4 KB pages: %.1f ns each; with a system call every 16: %.1f ns\n", mb, alone,
              with);
  std::printf("  a system call costs this reader %.0f ns: %.0f ns the call, %.0f ns after it (sink %llu)\n",
              (with - alone) * 16, call, (with - alone) * 16 - call, static_cast<unsigned long long>(sink % 10));
  ::munmap(p, size);
}
