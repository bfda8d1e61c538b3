import Foundation

/// The command line that starts a worker process for a job.
///
/// The pipeline-alone clients run pinned to one CPU with `taskset` (util-linux). Over
/// ``InstantTransport`` each request runs on a task of its own that hands its answer back to the
/// caller; spread over two CPUs every hand-back wakes a thread on the other one, and on a VM
/// whose idle CPUs halt at once that wake-up costs more than the pipeline and varies from run to
/// run (unpinned: 13.3–16.2 µs per request plain, 20.4–24.1 µs full; pinned: 6.9–7.4 µs and
/// 10.4–12.3 µs, 2026-11-28). On one CPU the hand-back is a switch between two threads of that
/// CPU, so the figure is the pipeline's own work.
struct WorkerCommand {
    /// The program to start.
    let path: String
    /// Its arguments.
    let arguments: [String]

    /// Where `taskset` is looked for.
    static let tasksetPath = "/usr/bin/taskset"

    /// Whether the pipeline-alone clients run pinned: `taskset` is installed.
    static var pinsPipelineAlone: Bool { FileManager.default.isExecutableFile(atPath: tasksetPath) }

    /// The command for `job`, run by `executable` with the job as JSON.
    init(job: WorkerJob, executable: String, json: String) {
        let workerArguments = [WorkerJob.argument, json]
        if job.client.isPipelineAlone, Self.pinsPipelineAlone {
            let cpu = max(0, ProcessInfo.processInfo.activeProcessorCount - 1)
            path = Self.tasksetPath
            arguments = ["-c", String(cpu), executable] + workerArguments
        } else {
            path = executable
            arguments = workerArguments
        }
    }
}
