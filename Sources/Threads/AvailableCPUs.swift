import CReceiptThreadPlacement
import Glibc

/// How many threads of this process can run at once: what a pool of workers is sized by.
public enum AvailableCPUs {
    /// The CPUs the calling thread may run on (its affinity, which `taskset` and cpusets set), fewer when the
    /// cgroup's CPU time limit (cgroup v2 `cpu.max`, a container's `--cpus`) is lower, rounded up: 1.5 CPUs count
    /// 2. At least 1; the online CPUs when the affinity cannot be read.
    public static var count: Int {
        let allowed = Int(receipt_thread_allowed_cpu_count())
        let cpus = allowed > 0 ? allowed : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        guard let limit = cgroupLimit(cpuMax: cgroupCPUMax()) else { return cpus }
        return max(1, min(cpus, limit))
    }

    /// The CPUs that a cgroup v2 `cpu.max` line (`QUOTA PERIOD`, in microseconds, or `max PERIOD`) allows,
    /// rounded up; nil for no limit or a line that is not one.
    static func cgroupLimit(cpuMax line: String?) -> Int? {
        guard let fields = line?.split(separator: " "), fields.count == 2, let quota = Int(fields[0]),
            let period = Int(fields[1]), quota > 0, period > 0
        else { return nil }
        return (quota + period - 1) / period
    }

    /// The first line of this process's cgroup `cpu.max`, as a container sees its own cgroup; nil where there is
    /// none (the root cgroup, cgroup v1).
    private static func cgroupCPUMax() -> String? {
        let descriptor = open("/sys/fs/cgroup/cpu.max", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").first.map(String.init)
    }
}
