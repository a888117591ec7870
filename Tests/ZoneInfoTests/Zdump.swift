import Foundation
import ZoneInfo

struct ZdumpFailure: Error, CustomStringConvertible {
    let description: String
}

/// What the C library says about a zone, as Debian's `zdump -i -c FROM,TO ZONE` prints it: the local time at the
/// start of year FROM, then one line per change up to the end of year TO - 1, each in the local time it starts,
/// for example `2006-04-02<TAB>03<TAB>-07<TAB>PDT<TAB>1`.
///
/// zdump (package libc-bin) asks glibc's `localtime` with TZ set to the zone, in its own process, so nothing here
/// changes this process's environment. Its work is bounded by the year range.
struct ZdumpTimeline {
    /// The local time in force at January 1 of the first year, 00:00 UTC.
    let initial: LocalTimeType
    /// Each change: the instant and the local time it starts, ascending.
    let changes: [(instant: Int64, type: LocalTimeType)]

    static let executable = URL(fileURLWithPath: "/usr/bin/zdump")

    init(zone: String, fromYear: Int, toYear: Int) throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["-i", "-c", "\(fromYear),\(toYear)", zone]
        process.environment = ["LC_ALL": "C"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ZdumpFailure(description: "zdump \(zone) exited with status \(process.terminationStatus)")
        }
        var initial: LocalTimeType?
        var changes: [(instant: Int64, type: LocalTimeType)] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("TZ=") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3 else { throw ZdumpFailure(description: "unexpected zdump line \"\(line)\"") }
            let type = try Self.localTime(fields, line: line)
            if fields[0] == "-" {
                initial = type
            } else {
                let wallClock = try Self.wallClock(date: fields[0], time: fields[1], line: line)
                changes.append((wallClock - Int64(type.utcOffset), type))
            }
        }
        guard let initial else { throw ZdumpFailure(description: "zdump \(zone) printed no initial line") }
        self.initial = initial
        self.changes = changes
    }

    /// The local time zdump's lines give at `instant` (within the year range).
    func localTime(at instant: Int64) -> LocalTimeType {
        var type = initial
        for change in changes {
            if change.instant > instant { break }
            type = change.type
        }
        return type
    }

    /// `offset [abbreviation [1]]`: zdump leaves the abbreviation out (empty, or absent) when it is the offset as
    /// printed, and writes 1 after it for daylight-saving time.
    private static func localTime(_ fields: [String], line: Substring) throws -> LocalTimeType {
        let offsetText = fields[2]
        let digits = Array(offsetText.dropFirst())
        guard let sign = offsetText.first, sign == "+" || sign == "-", [2, 4, 6].contains(digits.count),
            digits.allSatisfy(\.isNumber)
        else { throw ZdumpFailure(description: "unexpected offset in zdump line \"\(line)\"") }
        // ±HH, ±HHMM or ±HHMMSS.
        let parts = stride(from: 0, to: digits.count, by: 2).map { Int(String(digits[$0..<$0 + 2])) ?? 0 }
        let seconds = parts[0] * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0)
        let abbreviation = fields.count > 3 && !fields[3].isEmpty ? fields[3] : offsetText
        let isDaylightSaving = fields.count > 4 && fields[4] == "1"
        return LocalTimeType(
            utcOffset: Int32(sign == "-" ? -seconds : seconds), isDaylightSaving: isDaylightSaving,
            abbreviation: abbreviation)
    }

    /// Seconds since 1970 of a local date `YYYY-MM-DD` and time `HH[:MM[:SS]]` read as if it were UTC.
    private static func wallClock(date: String, time: String, line: Substring) throws -> Int64 {
        let day = date.split(separator: "-").compactMap { Int($0) }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard day.count == 3, (1...3).contains(clock.count) else {
            throw ZdumpFailure(description: "unexpected date or time in zdump line \"\(line)\"")
        }
        let padded = clock + Array(repeating: 0, count: 3 - clock.count)
        return utc(day[0], day[1], day[2], padded[0], padded[1], padded[2])
    }
}

/// SplitMix64: a fixed seed gives the same instants on every run.
struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
