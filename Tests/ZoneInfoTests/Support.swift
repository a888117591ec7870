import Foundation
import Testing
import ZoneInfo

struct MissingVector: Error, CustomStringConvertible {
    let path: String
    var description: String { "test vector \(path) is missing" }
}

/// Test vectors stored as files beside the tests (see Vectors/SOURCES.md for provenance).
enum Vectors {
    static func bytes(_ relativePath: String) throws -> [UInt8] {
        var components = ("Vectors/" + relativePath).split(separator: "/").map(String.init)
        let name = components.removeLast()
        let directory = components.joined(separator: "/")
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: directory) else {
            throw MissingVector(path: relativePath)
        }
        return Array(try Data(contentsOf: url))
    }

    /// America/Los_Angeles from tzdata 2025b.
    static func losAngeles() throws -> TimeZoneRules {
        try TimeZoneRules(tzif: bytes("America/Los_Angeles"), name: "America/Los_Angeles")
    }
}

/// Seconds since 1970-01-01T00:00:00Z of a UTC date and time, counted day by day from 1970 (deliberately not the
/// module's calendar arithmetic, so the two check each other).
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Int64 {
    func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }
    var days = 0
    if year >= 1970 {
        for past in 1970..<year { days += isLeap(past) ? 366 : 365 }
    } else {
        for before in year..<1970 { days -= isLeap(before) ? 366 : 365 }
    }
    let monthLengths = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    days += monthLengths.prefix(month - 1).reduce(0, +) + day - 1
    return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
}

func local(_ offset: Int32, _ isDaylightSaving: Bool, _ abbreviation: String) -> LocalTimeType {
    LocalTimeType(utcOffset: offset, isDaylightSaving: isDaylightSaving, abbreviation: abbreviation)
}

/// The ``ZoneInfoError`` `body` throws, or nil when it succeeds.
func zoneInfoError<T>(_ body: () throws(ZoneInfoError) -> T) -> ZoneInfoError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
