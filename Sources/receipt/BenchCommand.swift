import ReceiptBenchmark
import StrictJSON

/// `receipt bench`: how fast verification and signing are on this machine, next to their yardsticks.
enum BenchCommand {
    static let help = """
        Usage: receipt bench [--seconds S] [--rounds N] [--threads T] [--json]

        Signs receipts of 3 and 1000 purchases with fresh RSA-2048 and EC P-256 chains and measures, each as the
        median of N rounds of S seconds: our verifications per second on one thread and on T threads; the raw
        signature check with the same key (EVP_DigestVerify, the limit); the usual OpenSSL path (d2i_PKCS7 +
        PKCS7_verify); our signing and raw signing per second; verifying and parsing 1000 purchases; parsing a
        JSON object of 60 000 keys against an array of the same size (the ratio of their parse times stays near 1
        when objects parse in linear time); writing the verifyReceipt JSON of 3 and of 1000 purchases; peak
        memory.

        Options:
          --seconds S   Length of one round (default 1).
          --rounds N    Rounds per figure; the median is reported (default 5).
          --threads T   Threads for the all-cores figure (default: the number of cores).
          --json        Print one JSON object.
        """

    /// The options the command accepts.
    static let options = OptionSpec(valued: ["--seconds", "--rounds", "--threads"], flags: ["--json"])

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(
            arguments, spec: options)
        var configuration = Benchmark.Configuration()
        if let text = try parsed.single("--seconds") {
            guard let seconds = Double(text), seconds > 0, seconds <= 600 else {
                throw .usage("--seconds must be a number of seconds above 0 and at most 600")
            }
            configuration.secondsPerRound = seconds
        }
        for (name, apply) in [
            ("--rounds", { configuration.rounds = $0 }), ("--threads", { configuration.threads = $0 }),
        ]
            as [(String, (Int) -> Void)]
        {
            guard let text = try parsed.single(name) else { continue }
            guard let value = Int(text), (1...1000).contains(value) else {
                throw .usage("\(name) must be from 1 to 1000")
            }
            apply(value)
        }
        let json = parsed.flag("--json")
        let report: Benchmark.Report
        do {
            report = try Benchmark.run(configuration) { step in if !json { Files.printError("measuring \(step)…") } }
        } catch {
            throw .rejected("\(error)")
        }
        if json {
            var output = JSONValue.object(document(report)).serializedBytes(pretty: true)
            output.append(UInt8(ascii: "\n"))
            Files.writeStandardOutput(output)
        } else {
            Files.writeStandardOutput(Array(table(report).utf8))
        }
    }

    static func table(_ report: Benchmark.Report) -> String {
        var lines = [
            "machine: \(report.machine)",
            "each figure: median of \(report.configuration.rounds) rounds of \(report.configuration.secondsPerRound) s",
            "",
        ]
        func cell(_ value: String) -> String { PlainText.cell(value, width: 34) }
        lines.append(cell("") + report.figures.map { cell($0.algorithm) }.joined())
        let rows: [(String, (Benchmark.KeyFigures) -> String)] = [
            (
                "our verify, 1 thread",
                { figures in
                    "\(rate(figures.verify.median))  \(ratio(figures.verify.ratio(to: figures.rawVerify))) raw  "
                        + "\(ratio(figures.verify.ratio(to: figures.pkcs7Verify))) usual"
                }
            ),
            (
                "our verify, \(report.threads) threads",
                { figures in
                    "\(rate(figures.verifyAllCores.median))  \(ratio(figures.verifyAllCores.median / figures.verify.median)) 1 thread"
                }
            ),
            ("raw EVP_DigestVerify (the limit)", { rate($0.rawVerify.median) }),
            ("d2i_PKCS7 + PKCS7_verify (usual)", { rate($0.pkcs7Verify.median) }),
            (
                "our sign",
                { figures in "\(rate(figures.sign.median))  \(ratio(figures.sign.ratio(to: figures.rawSign))) raw" }
            ),
            ("raw EVP_DigestSign", { rate($0.rawSign.median) }),
            ("verify + parse 1000 purchases", { "\(PlainText.decimal($0.verifyLargeMilliseconds, places: 2)) ms" }),
        ]
        for (name, value) in rows { lines.append(cell(name) + report.figures.map { cell(value($0)) }.joined()) }
        lines.append("")
        lines.append(
            "receipts: 3 purchases \(report.figures.map { "\($0.smallReceiptBytes) B" }.joined(separator: " / ")), "
                + "1000 purchases \(report.figures.map { "\($0.largeReceiptBytes) B" }.joined(separator: " / "))")
        let json = report.json
        lines.append(
            "JSON: \(json.keys)-key object vs array of the same size (\(json.bytes) B), parse time ratio "
                + "\(ratio(json.parseTimeRatio)) (\(PlainText.decimal(json.objectMilliseconds, places: 2)) ms vs "
                + "\(PlainText.decimal(json.arrayMilliseconds, places: 2)) ms)")
        let write = report.jsonWrite
        lines.append(
            "JSON write: verifyReceipt JSON of 3 purchases (\(write.smallBytes) B) \(rate(write.small.median)), "
                + "of 1000 purchases (\(write.largeBytes) B) \(PlainText.decimal(1000 / write.large.median, places: 2)) ms "
                + "(\(PlainText.decimal(write.large.median * Double(write.largeBytes) / 1e6, places: 0)) MB/s)")
        lines.append("peak memory: \(report.peakMemoryBytes >> 20) MiB")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The version of `--json`'s layout (README, "The benchmark's JSON"): within a version keys are only added.
    static let schemaVersion = 1

    static func document(_ report: Benchmark.Report) -> JSONObject {
        func rateJSON(_ rate: Benchmark.Rate, bytes: Int? = nil) -> JSONValue {
            var object = JSONObject()
            if let bytes { object["bytes"] = .integer(bytes) }
            object["per_second"] = .decimal(rate.median, places: 0)
            object["rounds"] = .array(rate.rounds.map { .decimal($0, places: 0) })
            return .object(object)
        }
        var figures = JSONObject()
        for key in report.figures {
            figures[key.algorithm] = .object(
                JSONObject([
                    "verify": rateJSON(key.verify), "verify_all_cores": rateJSON(key.verifyAllCores),
                    "raw_verify": rateJSON(key.rawVerify), "pkcs7_verify": rateJSON(key.pkcs7Verify),
                    "sign": rateJSON(key.sign), "raw_sign": rateJSON(key.rawSign),
                    "verify_vs_raw": .decimal(key.verify.median / key.rawVerify.median, places: 3),
                    "verify_vs_pkcs7": .decimal(key.verify.median / key.pkcs7Verify.median, places: 2),
                    "sign_vs_raw": .decimal(key.sign.median / key.rawSign.median, places: 3),
                    "verify_1000_purchases_ms": .decimal(key.verifyLargeMilliseconds, places: 3),
                ]))
        }
        return JSONObject([
            "schema_version": .integer(Self.schemaVersion),
            "machine": .string(report.machine), "threads": .integer(report.threads),
            "seconds_per_round": .number(String(report.configuration.secondsPerRound)),
            "rounds": .integer(report.configuration.rounds), "figures": .object(figures),
            "json_object_vs_array": .object(
                JSONObject([
                    "keys": .integer(report.json.keys), "bytes": .integer(report.json.bytes),
                    "object_ms": .decimal(report.json.objectMilliseconds, places: 3),
                    "array_ms": .decimal(report.json.arrayMilliseconds, places: 3),
                    "parse_time_ratio": .decimal(report.json.parseTimeRatio, places: 2),
                ])),
            "json_write": .object(
                JSONObject([
                    "receipt_3_purchases": rateJSON(report.jsonWrite.small, bytes: report.jsonWrite.smallBytes),
                    "receipt_1000_purchases": rateJSON(report.jsonWrite.large, bytes: report.jsonWrite.largeBytes),
                ])),
            "peak_memory_bytes": .integer(report.peakMemoryBytes),
        ])
    }

    /// `12,346/s`.
    private static func rate(_ value: Double) -> String {
        PlainText.grouped(value) + "/s"
    }

    /// `0.95×`.
    private static func ratio(_ value: Double) -> String {
        PlainText.decimal(value, places: 2) + "×"
    }
}
