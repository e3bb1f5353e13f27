//! Per-thread CPU time, so cells running side by side do not distort each other's clocks, and
//! a way to give a cell's work a thread of its own so that its clock holds all of that work.

use std::time::Instant;

/// CPU seconds of the calling thread.
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given, which we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

/// CPU time of the calling thread and wall time since a start.
pub struct Clock {
    cpu: f64,
    wall: Instant,
}

impl Clock {
    pub fn start() -> Self {
        Self {
            cpu: thread_cpu_seconds(),
            wall: Instant::now(),
        }
    }
    /// CPU seconds of this thread since the start.
    pub fn cpu(&self) -> f64 {
        thread_cpu_seconds() - self.cpu
    }
    /// Wall seconds since the start.
    pub fn wall(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }
}

/// Runs `work` on a thread of its own inside a one-thread rayon pool: parallel loops inside stay
/// on that thread (so [`Clock::cpu`] measured there holds all the work, and results are those of
/// any thread count), and no other cell runs on it meanwhile. The thread is a plain one: a rayon
/// worker waiting on another pool would run other cells while it waits.
pub fn on_own_thread<T: Send>(
    work: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    std::thread::scope(|scope| {
        scope
            .spawn(|| pool.install(work))
            .join()
            .map_err(|_| anyhow::anyhow!("the cell's thread panicked"))?
    })
}
