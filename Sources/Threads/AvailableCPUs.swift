import CReceiptThreadPlacement
import Glibc

/// How many threads of this process can run at once: what a pool of workers is sized by.
public enum AvailableCPUs {
    /// The CPUs the calling thread may run on (its affinity, which `taskset` and cpusets set), fewer when the
    /// cgroup's CPU time limit (a container's `--cpus`: cgroup v2 `cpu.max`, or cgroup v1 `cpu.cfs_quota_us` over
    /// `cpu.cfs_period_us`) is lower, rounded up: 1.5 CPUs count 2. At least 1; the online CPUs when the affinity
    /// cannot be read.
    public static var count: Int {
        let allowed = Int(receipt_thread_allowed_cpu_count())
        let cpus = allowed > 0 ? allowed : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let limit =
            cgroupLimit(cpuMax: firstLine(of: "/sys/fs/cgroup/cpu.max"))
            ?? cgroupLimit(
                cfsQuota: firstLine(of: "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                cfsPeriod: firstLine(of: "/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
        guard let limit else { return cpus }
        return max(1, min(cpus, limit))
    }

    /// The CPUs that a cgroup v2 `cpu.max` line (`QUOTA PERIOD`, in microseconds, or `max PERIOD`) allows,
    /// rounded up; nil for no limit or a line that is not one.
    static func cgroupLimit(cpuMax line: String?) -> Int? {
        guard let fields = line?.split(separator: " "), fields.count == 2 else { return nil }
        return cgroupLimit(cfsQuota: String(fields[0]), cfsPeriod: String(fields[1]))
    }

    /// The CPUs that cgroup v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us` (microseconds; a quota of -1 for no
    /// limit) allow, rounded up; nil for no limit or values that are not numbers.
    static func cgroupLimit(cfsQuota: String?, cfsPeriod: String?) -> Int? {
        guard let cfsQuota, let cfsPeriod, let quota = Int(cfsQuota), let period = Int(cfsPeriod), quota > 0,
            period > 0
        else { return nil }
        return quota / period + (quota % period == 0 ? 0 : 1)
    }

    /// The first line of the file at `path`, as a container sees its own cgroup's files; nil where there is none
    /// (cpu.max in the root cgroup or under cgroup v1, the cfs files under cgroup v2).
    private static func firstLine(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").first.map(String.init)
    }
}
