// The Python driver's threads: a small pool whose caller never waits for a
// worker that has not started.
//
// A call's units are claimed from a shared counter. The calling thread claims
// and runs units until none is left, then waits only for the units other
// threads have already claimed; a worker the scheduler has not run yet, or
// runs late, finds nothing to claim and goes back to sleep. An OpenMP
// parallel region instead ends in a barrier that every thread of its team
// must reach: when another runtime's threads (ONNX Runtime, OpenVINO, torch)
// or a neighbour process hold the cores, the caller of a 0.5 ms call waited
// there about a scheduler slice for a worker that had not yet run (8-16 ms,
// up to 28x its one-thread time). ONNX Runtime's pool revokes unstarted work
// the same way (EigenNonBlockingThreadPool.h, RevokeWithTag).
//
// One call uses the workers at a time; a call made while another holds them
// (another Python thread) runs on its own thread alone. The workers sleep on
// a condition variable between calls and are started on first use; a child
// process after fork starts its own.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "ovpool/run.hpp"

namespace ovpool_driver {

using ovpool::Call;
using ovpool::Plan;
using ovpool::UnitFn;

// A thread's scratch block, kept between calls and grown when a plan needs
// more (the identity padding is written again by each call's init_scratch).
class Scratch {
  public:
    Scratch() = default;
    Scratch(const Scratch &) = delete;
    Scratch &operator=(const Scratch &) = delete;
    ~Scratch() { std::free(m_data); }
    // A block for `plan`, or nullptr when it needs one that cannot be had.
    char *for_plan(const Plan &plan) noexcept {
        const int64_t bytes = plan.scratch.bytes;
        if (bytes > m_capacity) {
            std::free(m_data);
            m_capacity = 0;
            m_data = static_cast<char *>(
                std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
            if (m_data == nullptr)
                return nullptr;
            m_capacity = bytes;
        }
        return m_data;
    }

  private:
    char *m_data = nullptr;
    int64_t m_capacity = 0;
};

class Workers {
  public:
    // The process's pool (never destroyed: its threads sleep until exit).
    static Workers &instance() {
        static Workers *pool = create();
        return *pool;
    }

    // Every unit of `call` on at most `threads` threads, the calling one among
    // them, with the calling thread's scratch `scratch` (plan.scratch.bytes,
    // prepared by init_scratch). Results do not depend on which thread ran a
    // unit.
    void run(const Plan &plan, const Call &call, UnitFn unit, int threads, char *scratch) noexcept {
        const int64_t n_units = call.schedule.n_units;
        std::unique_lock<std::mutex> busy(m_busy, std::try_to_lock);
        const int helpers =
            busy.owns_lock() && now_ns() >= m_solo_until ? start_helpers(threads - 1) : 0;
        if (helpers <= 0) {
            for (int64_t u = 0; u < n_units; u++)
                unit(plan, call, u, scratch);
            return;
        }
        m_plan = &plan;
        m_call = &call;
        m_unit = unit;
        m_units = n_units;
        m_chunk = call.schedule.chunk > 0 ? call.schedule.chunk : 1;
        m_next.store(0, std::memory_order_relaxed);
        m_done.store(0, std::memory_order_relaxed);
        m_caller_cpu = sched_getcpu();
        m_open.store(true);  // (seq_cst: the job's fields are visible to who sees it open)
        pthread_mutex_lock(&m_wake);
        m_generation++;
        m_wanted = helpers;
        m_posted.store(m_generation, std::memory_order_release);
        pthread_mutex_unlock(&m_wake);
        for (int i = 0; i < helpers; i++)
            pthread_cond_signal(&m_sleep);
        const int64_t start = now_ns();
        claim(scratch, true);
        const int64_t worked = now_ns();
        // wait only for the units other threads have claimed: they are running
        for (int spins = 0; m_done.load(std::memory_order_acquire) < n_units; spins++)
            pause(spins);
        straggled(worked - start, now_ns() - worked);
        pthread_mutex_lock(&m_wake);
        m_wanted = 0;  // a helper that wakes late takes no part
        pthread_mutex_unlock(&m_wake);
        // a helper between waking and looking at the job holds m_active: wait
        // for it to see the job closed (it has started: a few instructions)
        m_open.store(false);
        for (int spins = 0; m_active.load() != 0; spins++)
            pause(spins);
    }

  private:
    static Workers *create() {
        Workers *pool = new Workers();
        // a forked child has none of the parent's threads: it starts its own,
        // on a pool of its own (the parent's may be mid-call, its locks held)
        pthread_atfork(nullptr, nullptr, [] { fork_child(); });
        return pool;
    }

    static void fork_child() {
        Workers &pool = instance();
        new (&pool) Workers();  // (the parent's threads and locks are gone)
    }

    static int64_t now_ns() noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    // After a call: when the caller waited for a helper's unit longer than it
    // worked itself, the call took longer than the caller alone would have:
    // the helper lost its CPU mid-unit (a busy neighbour, another runtime's
    // threads) and the caller waited for the scheduler to run it again. The
    // calls of the next kMinSolo then run on the calling thread alone; the
    // period doubles at each straggling call (to kMaxSolo) and halves at each
    // call that does not, so that under lasting contention the calls that
    // probe with helpers are few. Beside one CPU-bound process on 2 vCPUs,
    // the contention group's worst p90 went from 2.5x the one-thread p90 to
    // 1.7x; a quiet machine rarely meets the rule.
    void straggled(int64_t worked, int64_t waited) noexcept {
        if (waited > worked && waited > kStraggleNs) {
            m_solo_until = now_ns() + m_solo_ns;
            m_solo_ns = m_solo_ns * 2 < kMaxSolo ? m_solo_ns * 2 : kMaxSolo;
        } else if (m_solo_ns > kMinSolo) {
            m_solo_ns /= 2;
        }
    }

    static void pause(int spins) {
        if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }

    // Start helper threads until `wanted` exist (as many as the system gives);
    // returns how many take part.
    int start_helpers(int wanted) noexcept {
        while (m_started < wanted) {
            try {
                std::thread([this] { serve(); }).detach();
            } catch (...) {
                break;
            }
            m_started++;
        }
        return wanted < m_started ? wanted : m_started;
    }

    // Claim and run units of the open job until none is left. The caller
    // yields once when no helper has arrived by the end of its first chunk:
    // one woken onto the caller's CPU (see move_off) otherwise waits there
    // for the caller's time slice to end, milliseconds, and every call until
    // then runs on one thread.
    void claim(char *scratch, bool caller = false) noexcept {
        for (bool first = true;; first = false) {
            const int64_t begin = m_next.fetch_add(m_chunk, std::memory_order_relaxed);
            if (begin >= m_units)
                return;
            const int64_t end = begin + m_chunk < m_units ? begin + m_chunk : m_units;
            for (int64_t u = begin; u < end; u++)
                m_unit(*m_plan, *m_call, u, scratch);
            m_done.fetch_add(end - begin, std::memory_order_release);
            if (caller && first && m_active.load(std::memory_order_relaxed) == 0)
                sched_yield();
        }
    }

    // A helper thread: sleep until a call wants it, help, sleep again.
    void serve() noexcept {
        Scratch own;
        uint64_t seen = 0;
        for (;;) {
            // a while awake before sleeping: a call that follows within
            // kSpins pauses finds its helper running (a sleeping one woke too
            // late to take part in 0.2-0.5 ms calls)
            for (int spins = 0; spins < kSpins && m_posted.load(std::memory_order_acquire) == seen;
                 spins++) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
            pthread_mutex_lock(&m_wake);
            while (!(m_generation != seen && m_wanted > 0))
                pthread_cond_wait(&m_sleep, &m_wake);
            seen = m_generation;
            m_wanted--;
            pthread_mutex_unlock(&m_wake);
            m_active.fetch_add(1);
            if (m_open.load()) {
                if (m_caller_cpu >= 0 && sched_getcpu() == m_caller_cpu)
                    move_off(m_caller_cpu);
                char *scratch = own.for_plan(*m_plan);
                // without scratch it takes no unit: the others take them all
                if (scratch != nullptr || m_plan->scratch.bytes == 0) {
                    ovpool::init_scratch(*m_plan, scratch);
                    claim(scratch);
                }
            }
            m_active.fetch_sub(1);
        }
    }

    // A helper woken on the caller's CPU would only take turns with it: the
    // kernel places a woken thread beside its waker when the other CPUs look
    // busy for a moment, and a helper that sleeps between calls is never
    // runnable long enough for the load balancer to move it, so every later
    // call ran on one CPU while the other idled (a 0.1 ms call at 2 threads
    // took its one-thread time, 0.17-0.23 ms, in calls after a 10 ms sleep;
    // 0.12 ms, as OpenMP's, with this and the caller's yield in claim()).
    // Leaving that CPU out of its mask once moves it (its own mask is then
    // restored); between close calls it then spins on the CPU it moved to.
    static void move_off(int cpu) noexcept {
        cpu_set_t mask;
        if (sched_getaffinity(0, sizeof mask, &mask) != 0 || !CPU_ISSET(cpu, &mask) ||
            CPU_COUNT(&mask) < 2)
            return;
        cpu_set_t others = mask;
        CPU_CLR(cpu, &others);
        if (sched_setaffinity(0, sizeof others, &others) == 0)
            sched_setaffinity(0, sizeof mask, &mask);
    }

    std::mutex m_busy;  // held by the call using the helpers
    // pthread's, not std::condition_variable: its wait is a symbol of GCC
    // 12's libstdc++ (GLIBCXX_3.4.30), past what a manylinux_2_34 wheel may use
    pthread_mutex_t m_wake = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t m_sleep = PTHREAD_COND_INITIALIZER;
    uint64_t m_generation = 0;           // (m_wake) one more each call
    std::atomic<uint64_t> m_posted{0};   // m_generation, for the helpers' spin
    static constexpr int kSpins = 4000;  // pauses (some 100-200 us)
    int m_wanted = 0;                    // (m_wake) helpers the open call still wants
    int m_started = 0;                   // (m_busy) helper threads started
    // (m_busy) straggled(): calls run alone until m_solo_until
    static constexpr int64_t kStraggleNs = 50000, kMinSolo = 20000000, kMaxSolo = 320000000;
    int64_t m_solo_until = 0, m_solo_ns = kMinSolo;

    // the open call
    std::atomic<bool> m_open{false};
    std::atomic<int> m_active{0};  // helpers looking at or working on it
    const Plan *m_plan = nullptr;
    const Call *m_call = nullptr;
    UnitFn m_unit = nullptr;
    int64_t m_units = 0, m_chunk = 1;
    int m_caller_cpu = -1;  // the CPU the caller posted the call from
    std::atomic<int64_t> m_next{0}, m_done{0};
};

}  // namespace ovpool_driver
