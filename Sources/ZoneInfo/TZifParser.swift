/// What a TZif file says, read strictly (RFC 8536, versions 1 to 4).
///
/// ```
/// file   = header(v1) data(v1, 4-byte times) [ header(v2+) data(v2+, 8-byte times) footer ]   (v2+ when version > 1)
/// header = "TZif" version(1: NUL, '2', '3' or '4') unused(15)
///          isutcnt(4) isstdcnt(4) leapcnt(4) timecnt(4) typecnt(4) charcnt(4)          big-endian, unsigned
/// data   = transition times(timecnt) transition types(timecnt × 1) local time types(typecnt × 6)
///          designations(charcnt) leap seconds(leapcnt × (time + 4)) isstd(isstdcnt) isut(isutcnt)
/// type   = utoff(4, signed) isdst(1) desigidx(1)
/// footer = "\n" TZ string "\n"
/// ```
///
/// Every count is checked against the bytes really present before anything is read or allocated. Refused as
/// `malformed`: a bad magic or version, typecnt or charcnt of zero, isutcnt or isstdcnt other than 0 or typecnt,
/// transition times not strictly ascending, a transition type index past typecnt, utoff outside
/// [-89999, 93599], isdst other than 0 or 1, a designation index past charcnt or a designation not NUL-terminated
/// or not 3 to 6 of [A-Za-z0-9+-], an indicator other than 0 or 1 (or a UT indicator without the standard one), a
/// footer that is not a TZ string between newlines or disagrees with the last transition's type, and any byte
/// after the last block. Version 2+ files are read from their 64-bit block; the version 1 block is only skipped.
struct TZifContents: Sendable, Hashable {
    /// Transition instants, strictly ascending.
    let transitions: [Int64]
    /// For each transition, the index in `types` of the local time that starts there.
    let transitionTypes: [UInt8]
    /// The local time types; type 0 applies before the first transition.
    let types: [LocalTimeType]
    /// The footer's TZ string, for instants after the last transition; nil for version 1 files and empty footers.
    let footer: POSIXTimeZone?
}

extension TZifContents {
    init(parsing bytes: [UInt8]) throws(ZoneInfoError) {
        var reader = TZifReader(bytes: bytes)
        let first = try reader.readHeader(block: "version 1")
        guard first.version >= 2 else {
            self = try reader.readData(first, timeSize: 4, block: "version 1")
            try reader.expectEnd(after: "the version 1 data")
            return
        }
        try reader.skip(first.dataSize(timeSize: 4), "the version 1 data")
        let second = try reader.readHeader(block: "version 2+")
        guard second.version == first.version else {
            throw ZoneInfoError(
                .malformed,
                "the version 2+ header says version \(second.version), the first header \(first.version)")
        }
        let data = try reader.readData(second, timeSize: 8, block: "version 2+")
        let footer = try reader.readFooter()
        if let footer, let last = data.transitions.last, let lastType = data.transitionTypes.last {
            let expected = data.types[Int(lastType)]
            let given = footer.localTime(at: last)
            guard given == expected else {
                throw ZoneInfoError(
                    .malformed,
                    "footer: the TZ string gives \(Self.describe(given)) at the last transition (\(last)), "
                        + "the transition says \(Self.describe(expected))")
            }
        }
        self.init(
            transitions: data.transitions, transitionTypes: data.transitionTypes, types: data.types, footer: footer)
    }

    private static func describe(_ type: LocalTimeType) -> String {
        "\(type.abbreviation) (\(type.utcOffset) s\(type.isDaylightSaving ? ", daylight saving" : ""))"
    }
}

/// A header's version and counts.
private struct TZifHeader {
    /// 1 for a NUL version byte, else the digit.
    let version: Int
    let isutcnt: Int
    let isstdcnt: Int
    let leapcnt: Int
    let timecnt: Int
    let typecnt: Int
    let charcnt: Int

    /// Bytes of the data block that follows, with `timeSize`-byte times. Counts are below 2^32, so this cannot
    /// overflow a 64-bit Int.
    func dataSize(timeSize: Int) -> Int {
        timecnt * (timeSize + 1) + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
    }
}

/// A cursor over the file; every read is bounds-checked and names what it was reading when it runs out.
private struct TZifReader {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var remaining: Int { bytes.count - position }

    private func truncated(_ what: String) -> ZoneInfoError {
        ZoneInfoError(.malformed, "truncated in \(what) (\(bytes.count) bytes in all)")
    }

    mutating func skip(_ count: Int, _ what: String) throws(ZoneInfoError) {
        guard count <= remaining else { throw truncated(what) }
        position += count
    }

    func expectEnd(after what: String) throws(ZoneInfoError) {
        guard remaining == 0 else {
            throw ZoneInfoError(.malformed, "\(remaining) unexpected bytes after \(what) (at offset \(position))")
        }
    }

    private mutating func readUInt32() -> UInt32 {
        var value: UInt32 = 0
        for index in position..<position + 4 { value = value << 8 | UInt32(bytes[index]) }
        position += 4
        return value
    }

    private mutating func readInt64() -> Int64 {
        var value: UInt64 = 0
        for index in position..<position + 8 { value = value << 8 | UInt64(bytes[index]) }
        position += 8
        return Int64(bitPattern: value)
    }

    /// A 44-byte header: the magic, a known version, and counts that agree with each other (not yet with the file's
    /// size, which ``readData(_:timeSize:block:)`` and ``skip(_:_:)`` check).
    mutating func readHeader(block: String) throws(ZoneInfoError) -> TZifHeader {
        guard remaining >= 44 else { throw truncated("the \(block) header") }
        guard bytes[position..<position + 4].elementsEqual("TZif".utf8) else {
            throw ZoneInfoError(.malformed, "the \(block) header does not start with the magic \"TZif\"")
        }
        let versionByte = bytes[position + 4]
        let version: Int
        switch versionByte {
        case 0: version = 1
        case UInt8(ascii: "2")...UInt8(ascii: "4"): version = Int(versionByte - UInt8(ascii: "0"))
        case UInt8(ascii: "5")...UInt8(ascii: "9"):
            throw ZoneInfoError(
                .unsupported, "TZif version '\(Character(Unicode.Scalar(versionByte)))' is newer than 4")
        default:
            throw ZoneInfoError(
                .malformed, "the \(block) header's version byte \(hex(versionByte)) is not NUL, '2', '3' or '4'")
        }
        position += 20
        let isutcnt = Int(readUInt32())
        let isstdcnt = Int(readUInt32())
        let leapcnt = Int(readUInt32())
        let timecnt = Int(readUInt32())
        let typecnt = Int(readUInt32())
        let charcnt = Int(readUInt32())
        guard typecnt != 0 else { throw ZoneInfoError(.malformed, "the \(block) header's typecnt is 0") }
        guard charcnt != 0 else { throw ZoneInfoError(.malformed, "the \(block) header's charcnt is 0") }
        guard isutcnt == 0 || isutcnt == typecnt else {
            throw ZoneInfoError(
                .malformed, "the \(block) header's isutcnt \(isutcnt) is neither 0 nor typecnt \(typecnt)")
        }
        guard isstdcnt == 0 || isstdcnt == typecnt else {
            throw ZoneInfoError(
                .malformed, "the \(block) header's isstdcnt \(isstdcnt) is neither 0 nor typecnt \(typecnt)")
        }
        return TZifHeader(
            version: version, isutcnt: isutcnt, isstdcnt: isstdcnt, leapcnt: leapcnt, timecnt: timecnt,
            typecnt: typecnt, charcnt: charcnt)
    }

    /// The data block `header` describes, after checking that all of it is present.
    mutating func readData(_ header: TZifHeader, timeSize: Int, block: String) throws(ZoneInfoError)
        -> TZifContents
    {
        guard header.dataSize(timeSize: timeSize) <= remaining else {
            throw truncated(
                "the \(block) data (the header counts \(header.dataSize(timeSize: timeSize)) bytes, "
                    + "\(remaining) remain)")
        }
        guard header.leapcnt == 0 else {
            throw ZoneInfoError(
                .unsupported,
                "\(header.leapcnt) leap-second records: zones that count leap seconds (right/) are not supported")
        }
        var transitions: [Int64] = []
        transitions.reserveCapacity(header.timecnt)
        for index in 0..<header.timecnt {
            let time = timeSize == 4 ? Int64(Int32(bitPattern: readUInt32())) : readInt64()
            if let previous = transitions.last, time <= previous {
                throw ZoneInfoError(
                    .malformed,
                    "\(block) transition \(index) (\(time)) is not after transition \(index - 1) (\(previous))")
            }
            transitions.append(time)
        }
        let transitionTypes = Array(bytes[position..<position + header.timecnt])
        position += header.timecnt
        if let index = transitionTypes.firstIndex(where: { Int($0) >= header.typecnt }) {
            throw ZoneInfoError(
                .malformed,
                "\(block) transition \(index) has type index \(transitionTypes[index]), past typecnt \(header.typecnt)")
        }
        var rawTypes: [(utoff: Int32, isdst: UInt8, desigidx: Int)] = []
        rawTypes.reserveCapacity(header.typecnt)
        for _ in 0..<header.typecnt {
            let utoff = Int32(bitPattern: readUInt32())
            rawTypes.append((utoff, bytes[position], Int(bytes[position + 1])))
            position += 2
        }
        let designations = bytes[position..<position + header.charcnt]
        position += header.charcnt
        var types: [LocalTimeType] = []
        types.reserveCapacity(header.typecnt)
        for (index, raw) in rawTypes.enumerated() {
            guard (-89_999...93_599).contains(raw.utoff) else {
                throw ZoneInfoError(
                    .malformed, "\(block) type \(index) has utoff \(raw.utoff), outside [-89999, 93599]")
            }
            guard raw.isdst <= 1 else {
                throw ZoneInfoError(.malformed, "\(block) type \(index) has isdst \(raw.isdst), not 0 or 1")
            }
            let abbreviation = try Self.designation(at: raw.desigidx, in: designations, type: index, block: block)
            types.append(
                LocalTimeType(utcOffset: raw.utoff, isDaylightSaving: raw.isdst == 1, abbreviation: abbreviation))
        }
        let standardIndicators = Array(bytes[position..<position + header.isstdcnt])
        position += header.isstdcnt
        let utIndicators = Array(bytes[position..<position + header.isutcnt])
        position += header.isutcnt
        for (index, indicator) in standardIndicators.enumerated() where indicator > 1 {
            throw ZoneInfoError(.malformed, "\(block) standard/wall indicator \(index) is \(indicator), not 0 or 1")
        }
        for (index, indicator) in utIndicators.enumerated() {
            let standard = standardIndicators.isEmpty ? 0 : standardIndicators[index]
            guard indicator == 0 || (indicator == 1 && standard == 1) else {
                throw ZoneInfoError(
                    .malformed,
                    "\(block) UT/local indicator \(index) is \(indicator) with standard/wall indicator \(standard): "
                        + "it must be 0, or 1 with a standard indicator of 1")
            }
        }
        return TZifContents(transitions: transitions, transitionTypes: transitionTypes, types: types, footer: nil)
    }

    /// The NUL-terminated designation starting at `index`: 3 to 6 of [A-Za-z0-9+-] (RFC 8536 section 3.2).
    private static func designation(at index: Int, in designations: ArraySlice<UInt8>, type: Int, block: String)
        throws(ZoneInfoError) -> String
    {
        let start = designations.startIndex + index
        guard index < designations.count,
            let end = designations[start...].firstIndex(of: 0)
        else {
            throw ZoneInfoError(
                .malformed,
                "\(block) type \(type) has designation index \(index), which does not start a NUL-terminated name "
                    + "within charcnt \(designations.count)")
        }
        let name = designations[start..<end]
        guard (3...6).contains(name.count), name.allSatisfy(isDesignationByte) else {
            throw ZoneInfoError(
                .malformed,
                "\(block) type \(type) has designation \(ZoneInfoError.quoted(name)), not 3 to 6 of "
                    + "letters, digits, '+' and '-'")
        }
        return String(decoding: name, as: UTF8.self)
    }

    private static func isDesignationByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// `"\n" TZ string "\n"` ending the file; nil when the TZ string is empty.
    mutating func readFooter() throws(ZoneInfoError) -> POSIXTimeZone? {
        guard remaining > 0 else { throw truncated("the footer") }
        guard bytes[position] == UInt8(ascii: "\n") else {
            throw ZoneInfoError(.malformed, "the footer does not start with a newline (at offset \(position))")
        }
        position += 1
        guard let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else {
            throw truncated("the footer (no closing newline)")
        }
        let text = Array(bytes[position..<end])
        position = end + 1
        try expectEnd(after: "the footer")
        guard !text.isEmpty else { return nil }
        do {
            return try POSIXTimeZone(bytes: text)
        } catch {
            throw error.within("footer")
        }
    }
}
