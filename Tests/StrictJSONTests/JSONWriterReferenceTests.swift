import Foundation
import StrictJSON
import Testing

/// A JSON document to write, named for the test report by where it comes from.
struct JSONVector: CustomTestStringConvertible, Sendable {
    let name: String
    let value: JSONValue
    var testDescription: String { name }
}

/// The JSON documents of the repository, read where they are.
enum RepositoryJSON {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Test vectors, examples, fuzz corpora and fail cases, and the JSON shipped in the sources.
    static let folders = ["Tests", "examples", "FuzzTesting", "Sources", "certs"]

    /// Every file below `folders` that parses as JSON, the header and payload of every file that holds a JWS
    /// compact serialization, and those of every JWS held in their strings (a notification's signed payload), in
    /// path order.
    static let vectors: [JSONVector] = folders.flatMap(files(below:)).flatMap(documents(in:))

    /// The regular files below `folder`, as paths relative to the root, sorted; hidden ones (`.build`) left out.
    static func files(below folder: String) -> [String] {
        let directory = root.appendingPathComponent(folder)
        guard
            let enumerator = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { return [] }
        let prefix = root.path.count + 1
        return enumerator.compactMap { item -> String? in
            guard let url = item as? URL, (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true
            else { return nil }
            return String(url.path.dropFirst(prefix))
        }
        .sorted()
    }

    /// The JSON documents that the file at `path` is or holds: none when it is neither JSON nor a JWS.
    static func documents(in path: String) -> [JSONVector] {
        guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(path).path),
            data.count <= 4 << 20
        else { return [] }
        if let value = try? JSONValue(parsing: Array(data)) { return expanded(JSONVector(name: path, value: value)) }
        return jws(String(decoding: data, as: UTF8.self), name: path).flatMap(expanded)
    }

    /// `vector`, then the documents of every JWS held in its strings, named by the path to the string.
    static func expanded(_ vector: JSONVector) -> [JSONVector] {
        [vector]
            + strings(in: vector.value, path: "").flatMap { path, text in
                jws(text, name: "\(vector.name) \(path)").flatMap(expanded)
            }
    }

    /// The header and payload of `text` when it is a JWS compact serialization (RFC 7515 §7.1), else none.
    static func jws(_ text: String, name: String) -> [JSONVector] {
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return [] }
        return zip(["JWS header", "JWS payload"], parts).compactMap { label, part in
            guard let bytes = base64URLDecoded(part), let value = try? JSONValue(parsing: bytes) else { return nil }
            return JSONVector(name: "\(name) (\(label))", value: value)
        }
    }

    /// Every string in `value` with its key path from `path`.
    static func strings(in value: JSONValue, path: String) -> [(path: String, text: String)] {
        switch value {
        case .string(let text): [(path, text)]
        case .array(let elements):
            elements.enumerated().flatMap { position, element in strings(in: element, path: "\(path)[\(position)]") }
        case .object(let object): object.members.flatMap { strings(in: $0.value, path: path + "." + $0.key) }
        case .null, .bool, .number: []
        }
    }

    /// The bytes of unpadded base64url `text` (RFC 4648 §5), or nil when it is not base64url.
    static func base64URLDecoded(_ text: Substring) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }
}

/// Documents drawn at random from pieces that are easy to get wrong, the same on every run.
enum RandomJSON {
    /// Text pieces: ASCII runs short and long, everything that is escaped, and UTF-8 of every length.
    static let pieces = [
        "a", "key", "a run of plain ASCII text longer than a small string", " ", "/", "\"", "\\", "\n", "\r", "\t",
        "\u{08}", "\u{0C}", "\u{0}", "\u{1}", "\u{1B}", "\u{1F}", "\u{7F}", "\u{80}", "é", "\u{7FF}", "\u{800}",
        "世界", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "\u{10000}", "😀", "\u{10FFFF}", "e\u{301}",
    ]

    static let numbers = ["0", "-0", "1", "0.10", "1.5e10", "-1E-7", "9223372036854775807", "18446744073709551615"]

    /// A string of up to six pieces.
    static func text(using generator: inout SplitMix64) -> String {
        (0..<Int.random(in: 0...6, using: &generator)).map { _ in
            pieces[Int.random(in: pieces.indices, using: &generator)]
        }
        .joined()
    }

    /// A value with containers nested at most `depth` deep.
    static func document(depth: Int, using generator: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(numbers[Int.random(in: numbers.indices, using: &generator)])
        case 3, 4: return .string(text(using: &generator))
        case 5:
            return .array(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                    document(depth: depth - 1, using: &generator)
                })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                object[text(using: &generator)] = document(depth: depth - 1, using: &generator)
            }
            return .object(object)
        }
    }

    /// `count` documents from a fixed seed.
    static func documents(_ count: Int) -> [JSONValue] {
        var generator = SplitMix64(state: 13)
        return (0..<count).map { _ in document(depth: 5, using: &generator) }
    }
}

/// Where `bytes` first differ from `expected`, with a little of each around it; nil when they are equal.
private func difference(_ bytes: [UInt8], _ expected: String) -> String? {
    let expectedBytes = Array(expected.utf8)
    guard bytes != expectedBytes else { return nil }
    let offset =
        zip(bytes.indices, zip(bytes, expectedBytes)).first { $1.0 != $1.1 }?.0 ?? min(bytes.count, expectedBytes.count)
    func excerpt(_ bytes: [UInt8]) -> String {
        String(decoding: bytes[min(offset, bytes.count)..<min(offset + 40, bytes.count)], as: UTF8.self)
    }
    return "at byte \(offset): \(excerpt(bytes).debugDescription), expected \(excerpt(expectedBytes).debugDescription)"
}

/// Records an issue at the caller unless `value` is written, compact and pretty, as the reference writes it: as
/// bytes, appended to a buffer that holds something already, and as text.
private func expectReferenceOutput(_ value: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
    for pretty in [false, true] {
        let expected = ReferenceJSONWriter.serialized(value, pretty: pretty)
        #expect(
            difference(value.serializedBytes(pretty: pretty), expected) == nil, "pretty: \(pretty)",
            sourceLocation: sourceLocation)
        var appended = Array("prefix".utf8)
        value.write(to: &appended, pretty: pretty)
        #expect(difference(appended, "prefix" + expected) == nil, sourceLocation: sourceLocation)
        #expect(value.serialized(pretty: pretty) == expected, sourceLocation: sourceLocation)
    }
}

@Suite("JSON output: the reference writer's bytes, compact and pretty")
struct JSONWriterReferenceTests {
    @Test("the repository's vectors are found: JSON files, and the headers and payloads of JWS files and strings")
    func vectorsFound() {
        let names = RepositoryJSON.vectors.map(\.name)
        #expect(names.count >= 30)
        #expect(names.contains("examples/purchase.json"))
        #expect(names.contains("Sources/ReceiptService/openapi.json"))
        #expect(names.contains { $0.hasSuffix(".jws (JWS payload)") })
        #expect(names.contains { $0.hasSuffix(".json .signedPayload (JWS payload)") })
    }

    @Test(
        "every JSON vector of the repository is written as the reference writes it", arguments: RepositoryJSON.vectors)
    func repositoryVector(_ vector: JSONVector) {
        expectReferenceOutput(vector.value)
    }

    @Test("the tricky document of the writer's tests is written as the reference writes it")
    func trickyDocumentAsReference() {
        expectReferenceOutput(trickyDocument)
    }

    @Test("every ASCII character, alone and between letters, is written as the reference writes it")
    func everyASCIICharacter() {
        for value in UInt8(0)...0x7F {
            let character = String(UnicodeScalar(value))
            expectReferenceOutput(.string(character))
            expectReferenceOutput(.string("ab" + character + "cd"))
        }
        let controls = String((UInt8(0)..<0x20).map { Character(UnicodeScalar($0)) })
        expectReferenceOutput(.string(controls + "\"\\" + controls))
    }

    @Test("a character that needs an escape, or one next to those, is written as the reference writes it anywhere")
    func everyPosition() {
        let characters = ["\u{0}", "\u{1F}", " ", "!", "\"", "#", "[", "\\", "]", "\u{7F}", "é", "😀"]
        for length in JSONStringTests.positionLengths {
            for position in 0..<length {
                for character in characters {
                    let before = String(repeating: "a", count: position)
                    let after = String(repeating: "b", count: length - position - 1)
                    expectReferenceOutput(.string(before + character + after))
                }
            }
        }
    }

    @Test("UTF-8 of every length beside escapes, astral-plane scalars included, is written as the reference writes it")
    func nonASCIIText() {
        for text in [
            "é", "\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}", "😀\n😀", "\"世界\"", "\\é\\", "e\u{301}\u{1F}",
            "\u{2028}\u{2029}\u{FEFF}", String(repeating: "😀\t", count: 200),
        ] {
            expectReferenceOutput(.string(text))
        }
    }

    @Test("long strings with escapes far apart are written as the reference writes them")
    func longStrings() {
        let run = String(repeating: "plain ascii ", count: 40)
        for text in [
            run, run + "\"", "\n" + run, run + "\\" + run + "\u{0}" + run, String(repeating: "\"", count: 500),
        ] {
            expectReferenceOutput(.string(text))
        }
    }

    @Test("keys that need escaping are written as the reference writes them")
    func escapedKeys() {
        var object = JSONObject()
        for key in ["", "\"", "\\", "a\nb", "\u{0}", "é😀", String(repeating: "k\t", count: 50)] {
            object[key] = .string(key)
        }
        expectReferenceOutput(.object(object))
    }

    @Test("empty and deeply nested containers are written as the reference writes them")
    func nestedContainers() {
        var value = JSONValue.array([.array([]), .object(JSONObject()), .string("")])
        for depth in 0..<60 {
            value =
                depth.isMultiple(of: 2) ? .array([value, .null]) : .object(JSONObject(["k": value, "e": .array([])]))
        }
        expectReferenceOutput(value)
        for empty: JSONValue in [.array([]), .object(JSONObject()), .array([.array([.array([])])])] {
            expectReferenceOutput(empty)
        }
    }

    @Test("500 random documents are written as the reference writes them")
    func randomDocuments() {
        for document in RandomJSON.documents(500) {
            expectReferenceOutput(document)
        }
    }
}
