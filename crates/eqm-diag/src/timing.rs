//! Wall times of the pipeline's stages, which `-v` prints. A stage that runs several times
//! (parsing each file) adds up under one name, in the order the stages first ran.

use std::time::{Duration, Instant};

/// Wall time of one named stage.
#[derive(Debug, Clone, PartialEq)]
pub struct StageTime {
    pub stage: &'static str,
    pub time: Duration,
}

/// The stages timed so far, in the order they first ran.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    stages: Vec<StageTime>,
}

impl Timings {
    /// Adds `time` to the total of `stage`.
    pub fn record(&mut self, stage: &'static str, time: Duration) {
        match self.stages.iter_mut().find(|t| t.stage == stage) {
            Some(t) => t.time += time,
            None => self.stages.push(StageTime { stage, time }),
        }
    }

    /// Runs `f` and adds its wall time to `stage`.
    pub fn time<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let value = f();
        self.record(stage, start.elapsed());
        value
    }

    pub fn stages(&self) -> &[StageTime] {
        &self.stages
    }
}
