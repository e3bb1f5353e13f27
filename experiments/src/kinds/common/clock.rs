//! Per-thread CPU time, so cells running side by side do not distort each other's clocks.

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
