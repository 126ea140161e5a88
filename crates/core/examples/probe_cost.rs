// Temporary: the cost of each probe read at this machine's scale.
use std::time::Instant;
fn main() {
    let probe = pier_core::probe::system_probe();
    for _ in 0..3 {
        let t = Instant::now();
        let l = probe.processes().unwrap();
        let a = t.elapsed();
        let t = Instant::now();
        let s = probe.survey(&|_| false).unwrap();
        let b = t.elapsed();
        let t = Instant::now();
        let _ = pier_core::diagnose::scan(
            probe.as_ref(),
            &pier_core::diagnose::ScanOptions {
                sample: std::time::Duration::ZERO,
                ..Default::default()
            },
            &pier_core::diagnose::project::marker_on_disk,
        );
        let c = t.elapsed();
        println!(
            "{} procs: processes {:?}, survey {:?} ({} procs), scan {:?}",
            l.processes.len(),
            a,
            b,
            s.processes.processes.len(),
            c
        );
    }
}
