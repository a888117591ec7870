import Foundation
import Testing
import ZoneInfo

/// The TZif files of the database ``TimeZoneRules/system(_:)`` reads, by zone name.
enum SystemZones {
    static var directory: String {
        let value = ProcessInfo.processInfo.environment["TZDIR"] ?? ""
        return value.isEmpty ? "/usr/share/zoneinfo" : value
    }

    static func all() throws -> [String] {
        let root = URL(fileURLWithPath: directory)
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var names: [String] = []
        while let name = walker.nextObject() as? String {
            let path = root.appendingPathComponent(name).path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                let handle = FileHandle(forReadingAtPath: path)
            else { continue }
            defer { try? handle.close() }
            if let magic = try handle.read(upToCount: 4), magic == Data("TZif".utf8) { names.append(name) }
        }
        return names.sorted()
    }
}

/// A scratch directory, removed when the test ends.
final class ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("zoneinfo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

@Suite("The system database: names and files")
struct SystemDatabaseTests {
    @Test(
        "names that could leave the database directory, or are not zone names, are refused before any file is opened",
        arguments: [
            ("", "is empty"), ("/etc/passwd", "is an absolute path"), ("../etc/passwd", "has a '..' component"),
            ("America/../../etc/passwd", "has a '..' component"), ("America/./Los_Angeles", "has a '.' component"),
            ("America//Los_Angeles", "has an empty component"), ("America/", "has an empty component"),
            ("America/Los Angeles", "has a character other than"), ("UTC\u{0}", "has a character other than"),
            ("Europe\\London", "has a character other than"), ("Zürich", "has a character other than"),
            (String(repeating: "A", count: 256), "is longer than 255 bytes"),
        ])
    func invalidNames(_ name: String, _ rule: String) {
        let error = zoneInfoError { () throws(ZoneInfoError) in try TimeZoneRules.system(name) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "accepted")")
    }

    @Test("names with dots, dashes and pluses inside components are zone names (Etc/GMT+5, America/Port-au-Prince)")
    func namesWithPunctuation() throws {
        #expect(try TimeZoneRules.system("Etc/GMT+5").localTime(at: 0) == local(-18_000, false, "-05"))
        #expect(try TimeZoneRules.system("America/Port-au-Prince").name == "America/Port-au-Prince")
    }

    @Test("a zone that does not exist, or a directory, is not found; the message names the zone and the path")
    func notFound() {
        let missing = zoneInfoError { () throws(ZoneInfoError) in try TimeZoneRules.system("Mars/Olympus_Mons") }
        #expect(missing?.code == .notFound)
        #expect(missing?.message.contains("Mars/Olympus_Mons") == true)
        #expect(missing?.message.contains("/Mars/Olympus_Mons)") == true, "\(missing?.message ?? "")")
        let directory = zoneInfoError { () throws(ZoneInfoError) in try TimeZoneRules.system("America") }
        #expect(directory?.code == .notFound)
        #expect(directory?.message.contains("a directory") == true)
        let underFile = zoneInfoError { () throws(ZoneInfoError) in try TimeZoneRules.system("UTC/Nested") }
        #expect(underFile?.code == .notFound)
    }

    @Test("a symbolic link in the database is followed (UTC is a link to Etc/UTC)")
    func links() throws {
        let zone = try TimeZoneRules.system("UTC")
        #expect(zone.localTime(at: 0) == local(0, false, "UTC"))
        #expect(zone.footer == (try POSIXTimeZone(parsing: "UTC0")))
    }

    @Test("load(_:fromDirectory:) reads another database, and reports a bad file with its path")
    func otherDirectory() throws {
        let scratch = try ScratchDirectory()
        try scratch.write("America/Los_Angeles", Vectors.bytes("America/Los_Angeles"))
        try scratch.write("Broken/Zone", Array("TZif2".utf8))
        let zone = try TimeZoneRules.load("America/Los_Angeles", fromDirectory: scratch.path)
        #expect(zone == (try Vectors.losAngeles()))
        #expect(try TimeZoneRules.load("America/Los_Angeles", fromDirectory: scratch.path + "/") == zone)
        let broken = zoneInfoError { () throws(ZoneInfoError) in
            try TimeZoneRules.load("Broken/Zone", fromDirectory: scratch.path)
        }
        #expect(broken?.code == .malformed)
        let path = scratch.path + "/Broken/Zone"
        #expect(
            broken?.message == "time zone Broken/Zone: truncated in the version 1 header (5 bytes in all) (\(path))")
    }

    @Test("a file over 1 MiB is refused as too large without being read")
    func tooLarge() throws {
        let scratch = try ScratchDirectory()
        try scratch.write("Huge", [UInt8](repeating: 0, count: TimeZoneRules.maximumFileSize + 1))
        let error = zoneInfoError { () throws(ZoneInfoError) in
            try TimeZoneRules.load("Huge", fromDirectory: scratch.path)
        }
        #expect(error?.code == .tooLarge)
        #expect(error?.message.contains("1048577 bytes, more than 1048576") == true)
    }

    @Test("a FIFO where a zone should be is refused at once, not waited on")
    func fifo() throws {
        let scratch = try ScratchDirectory()
        #expect(mkfifo(scratch.path + "/Pipe", 0o600) == 0)
        let error = zoneInfoError { () throws(ZoneInfoError) in
            try TimeZoneRules.load("Pipe", fromDirectory: scratch.path)
        }
        #expect(error?.code == .unreadable)
        #expect(error?.message.contains("not a regular file") == true)
    }

    @Test("codes have stable snake_case names, and no description names a Swift type")
    func codes() {
        #expect(
            ZoneInfoError.Code.allCases.map(\.rawValue) == [
                "invalid_name", "not_found", "unreadable", "too_large", "malformed", "unsupported",
            ])
        let error = zoneInfoError { () throws(ZoneInfoError) in try TimeZoneRules.system("Mars/Olympus_Mons") }
        let description = error?.description ?? ""
        #expect(description.hasPrefix("not_found: time zone Mars/Olympus_Mons ("))
        for typeName in ["ZoneInfoError", "TimeZoneRules", "POSIXTimeZone", "Code", "LocalTimeType"] {
            #expect(!description.contains(typeName))
        }
    }
}
