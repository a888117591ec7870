import Foundation
import Testing

/// Inputs built to exhaust a parser are refused with the right code, and the process that refuses them stays
/// within a small, fixed amount of memory (measured as the child's peak resident size, never as time).
@Suite("Hostile inputs: refused within bounded memory")
struct HostileInputTests {
    /// Headroom over a valid receipt's own peak: far below what honouring any of these inputs would take.
    static let headroom = 48 << 20

    /// Writes `bytes` to `name`, verifies it with `extra` options, and returns the error code and peak memory.
    func verify(_ runner: CLIRunner, _ name: String, _ bytes: [UInt8], _ extra: [String] = []) throws -> (String, Int) {
        try Data(bytes).write(to: runner.directory.appendingPathComponent(name))
        return try verifyFile(runner, name, extra)
    }

    func verifyFile(_ runner: CLIRunner, _ name: String, _ extra: [String] = []) throws -> (String, Int) {
        let result = try PeakMemory.run(
            CLIRunner.executable,
            ["verify", runner.path(name), "--trust", runner.path("dev/root-ca.pem"), "--json"] + extra,
            in: runner.directory)
        let code =
            result.standardOutput.components(separatedBy: #""code":""#).dropFirst().first?
            .prefix(while: { $0 != "\"" }) ?? (result.status == 0 ? "valid" : "none")
        return (String(code), result.peakBytes)
    }

    /// Peak memory of verifying a small valid receipt: the baseline the others are compared with.
    func baseline(_ runner: CLIRunner) throws -> Int {
        try runner.signValidReceipt()
        let result = try PeakMemory.run(
            CLIRunner.executable, ["verify", runner.path("valid.der"), "--trust", runner.path("dev/root-ca.pem")],
            in: runner.directory)
        #expect(result.status == 0)
        return result.peakBytes
    }

    @Test("a claimed length larger than the input, up to 4 GiB and beyond, is malformed without allocating it")
    func hugeLengths() throws {
        let runner = try CLIRunner()
        let limit = try baseline(runner) + Self.headroom
        let cases: [[UInt8]] = [
            [0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16),
            [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16),
            [0x30, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 16),
            [0x30, 0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x06, 0x09],
            [
                0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02, 0xA0, 0x84, 0xFF, 0xFF,
                0xFF, 0xFF,
            ],
        ]
        for (index, bytes) in cases.enumerated() {
            let (code, peak) = try verify(runner, "length-\(index).der", bytes)
            #expect(code == "malformed", "case \(index)")
            #expect(peak < limit, "case \(index): peak \(peak >> 20) MiB")
        }
    }

    /// Indefinite lengths make the reader descend to find each end, so the depth limit stops it (`too_large`);
    /// definite lengths are skipped without descending, so the first element that is not a ContentInfo stops it.
    @Test("100 000 levels of nesting are refused", arguments: [true, false])
    func deepNesting(indefinite: Bool) throws {
        let runner = try CLIRunner()
        let limit = try baseline(runner) + Self.headroom
        let depth = 100_000
        var bytes: [UInt8]
        if indefinite {
            bytes =
                Array([[UInt8]](repeating: [0x30, 0x80], count: depth).joined())
                + [UInt8](repeating: 0, count: 2 * depth)
        } else {
            var headers: [[UInt8]] = []
            var length = 0
            for _ in 0..<depth {
                let header = [0x30] + Self.lengthOctets(length)
                headers.append(header)
                length += header.count
            }
            bytes = Array(headers.reversed().joined())
        }
        let (code, peak) = try verify(runner, "nested.der", bytes)
        #expect(code == (indefinite ? "too_large" : "malformed"))
        #expect(peak < limit, "peak \(peak >> 20) MiB")
    }

    @Test("a million tiny purchases are refused at the purchase limit, after the signature")
    func millionPurchases() throws {
        let runner = try CLIRunner()
        let limit = try baseline(runner)
        var attributes: [UInt8] =
            Self.attribute(2, [0x0C, 0x03] + Array("a.b".utf8))
            + Self.attribute(12, [0x16, 0x14] + Array("2024-06-05T12:00:00Z".utf8))
        let emptyPurchase = Self.attribute(17, [0x31, 0x00])
        attributes.reserveCapacity(attributes.count + emptyPurchase.count * 1_000_000)
        for _ in 0..<1_000_000 { attributes += emptyPurchase }
        let payload = [0x31] + Self.lengthOctets(attributes.count) + attributes
        try Data(payload).write(to: runner.directory.appendingPathComponent("payload.der"))
        let signed = try CLIRunner.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "cms", "-sign", "-binary", "-nodetach", "-noattr", "-outform", "DER", "-in", "payload.der",
                "-signer", "dev/receipt-signer.pem", "-inkey", "dev/receipt-signer.key", "-certfile",
                "dev/intermediate-ca.pem",
                "-out", "million.der",
            ],
            in: runner.directory)
        #expect(signed.status == 0)
        let (code, peak) = try verifyFile(runner, "million.der", ["--max-input-size", "20000000"])
        #expect(code == "too_large")
        #expect(
            peak < limit + 3 * payload.count + Self.headroom, "peak \(peak >> 20) MiB for \(payload.count >> 20) MiB")
        let (defaultCode, defaultPeak) = try verifyFile(runner, "million.der")
        #expect(defaultCode == "too_large")
        #expect(defaultPeak < limit + Self.headroom, "peak \(defaultPeak >> 20) MiB with the default input limit")
    }

    @Test("a signed zlib bomb is refused after inflating no more than the limit")
    func zlibBomb() throws {
        let runner = try CLIRunner()
        let limit = try baseline(runner)
        let script = """
            import zlib, sys
            c = zlib.compressobj(9)
            chunk = bytes(1 << 20)
            out = b"".join(c.compress(chunk) for _ in range(1024)) + c.flush()
            def der(tag, body):
                n = len(body)
                length = bytes([n]) if n < 128 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
                return bytes([tag]) + length + body
            oid = lambda hex: der(0x06, bytes.fromhex(hex))
            data = oid("2a864886f70d010701")
            zlib_alg = der(0x30, oid("2a864886f70d0109100308"))
            content = der(0x30, data + der(0xA0, der(0x04, out)))
            sys.stdout.buffer.write(der(0x30, der(0x02, b"\\x00") + zlib_alg + content))
            """
        try Data(script.utf8).write(to: runner.directory.appendingPathComponent("bomb.py"))
        let python = CLIRunner.python(["bomb.py"])
        let made = try CLIRunner.run(python.program, python.arguments, in: runner.directory)
        #expect(made.status == 0)
        try Data(made.standardOutput).write(to: runner.directory.appendingPathComponent("bomb.cd"))
        let signed = try CLIRunner.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "cms", "-sign", "-binary", "-nodetach", "-noattr", "-outform", "DER", "-econtent_type",
                "1.2.840.113549.1.9.16.1.9", "-in", "bomb.cd", "-signer", "dev/receipt-signer.pem",
                "-inkey", "dev/receipt-signer.key", "-certfile", "dev/intermediate-ca.pem", "-out", "bomb.der",
            ],
            in: runner.directory)
        #expect(signed.status == 0)
        let (code, peak) = try verifyFile(runner, "bomb.der", ["--max-decompressed-size", "8000000"])
        #expect(code == "too_large")
        #expect(peak < limit + Self.headroom, "peak \(peak >> 20) MiB for a 1 GiB bomb")
    }

    static func lengthOctets(_ length: Int) -> [UInt8] {
        guard length >= 0x80 else { return [UInt8(length)] }
        var octets: [UInt8] = []
        var rest = length
        while rest > 0 {
            octets.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    static func attribute(_ type: UInt8, _ value: [UInt8]) -> [UInt8] {
        let content: [UInt8] = [0x02, 0x01, type, 0x02, 0x01, 0x01, 0x04] + lengthOctets(value.count) + value
        return [0x30] + lengthOctets(content.count) + content
    }
}
