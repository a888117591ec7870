import Testing

@testable import Threads

@Suite("AvailableCPUs: how many threads of this process can run at once")
struct AvailableCPUsTests {
    @Test("the count is at least one and at most the CPUs this thread may run on")
    func countWithinAffinity() throws {
        let allowed = try #require(allowedCPUs().flatMap(cpuNumbers)).count
        #expect((1...allowed).contains(AvailableCPUs.count))
    }

    @Test(
        "a cgroup cpu.max quota counts the CPUs it pays for, rounded up",
        arguments: [
            ("100000 100000", 1), ("150000 100000", 2), ("50000 100000", 1), ("400000 100000", 4),
            ("9223372036854775807 100000", 92_233_720_368_548),
        ])
    func cgroupQuota(_ line: String, _ cpus: Int) {
        #expect(AvailableCPUs.cgroupLimit(cpuMax: line) == cpus)
    }

    @Test(
        "no limit, a missing file or a line that is not QUOTA PERIOD sets no cap",
        arguments: ["max 100000", "", "100000", "a b", "0 100000", "100000 0", "-1 100000", "1 2 3"] as [String?] + [
            nil
        ])
    func noCgroupQuota(_ line: String?) {
        #expect(AvailableCPUs.cgroupLimit(cpuMax: line) == nil)
    }

    @Test(
        "a cgroup v1 CFS quota counts the CPUs it pays for, rounded up",
        arguments: [("100000", "100000", 1), ("150000", "100000", 2), ("50000", "100000", 1), ("400000", "100000", 4)])
    func cfsQuota(_ quota: String, _ period: String, _ cpus: Int) {
        #expect(AvailableCPUs.cgroupLimit(cfsQuota: quota, cfsPeriod: period) == cpus)
    }

    @Test(
        "a CFS quota of -1, a missing file or a value that is not a number sets no cap",
        arguments: [("-1", "100000"), ("0", "100000"), ("100000", "0"), ("a", "100000"), ("", "100000")]
            as [(
                String?, String?
            )] + [(nil, "100000"), ("100000", nil)])
    func noCFSQuota(_ quota: String?, _ period: String?) {
        #expect(AvailableCPUs.cgroupLimit(cfsQuota: quota, cfsPeriod: period) == nil)
    }
}
