import Dispatch
import Glibc
import ReceiptCMS
import ReceiptCrypto
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import StrictJSON
import Synchronization
import Threads

/// Measures verification and signing on receipts it signs itself, next to the two yardsticks that give the
/// numbers meaning: the raw signature check with the same key (`EVP_DigestVerify`, the physical limit) and the
/// usual way (`d2i_PKCS7` + `PKCS7_verify`). Also parses a JSON object of many keys next to an array of the same
/// size, the cost a client controls with the body it posts, and writes receipts' JSON, the cost of every answer.
/// Every rate is the median of several rounds.
public enum Benchmark {
    public struct Configuration: Sendable {
        /// Length of one round of one measurement.
        public var secondsPerRound: Double
        /// Rounds per measurement; the median is reported.
        public var rounds: Int
        /// Threads for the all-cores measurement.
        public var threads: Int

        public init(
            secondsPerRound: Double = 1, rounds: Int = 5, threads: Int = AvailableCPUs.count
        ) {
            self.secondsPerRound = secondsPerRound
            self.rounds = max(1, rounds)
            self.threads = max(1, threads)
        }
    }

    /// Operations per second: the median and every round.
    public struct Rate: Sendable {
        public let median: Double
        public let rounds: [Double]

        /// The median over rounds of this rate divided by `reference`'s in the same round. Rounds of measurements
        /// taken together alternate, so a neighbour that slows the machine slows both sides of a ratio alike.
        public func ratio(to reference: Rate) -> Double {
            Benchmark.median(zip(rounds, reference.rounds).map { $1 > 0 ? $0 / $1 : 0 })
        }
    }

    /// The figures for one key type.
    public struct KeyFigures: Sendable {
        public let algorithm: String
        public let verify: Rate
        public let verifyAllCores: Rate
        public let rawVerify: Rate
        public let pkcs7Verify: Rate
        public let sign: Rate
        public let rawSign: Rate
        /// Median milliseconds to verify and parse a receipt of 1000 purchases.
        public let verifyLargeMilliseconds: Double
        public let largeReceiptBytes: Int
        public let smallReceiptBytes: Int
    }

    /// Parsing a JSON object of `keys` members against an array of the same text with `,` for every `:`: the same
    /// bytes, strings and numbers, so that what the ratio shows is the cost of the keys.
    public struct JSONFigures: Sendable {
        public let keys: Int
        public let bytes: Int
        /// Median milliseconds to parse the object, and the array.
        public let objectMilliseconds: Double
        public let arrayMilliseconds: Double
        /// The median over rounds of the object's parse time divided by the array's.
        public let parseTimeRatio: Double
    }

    /// Writing the verifyReceipt JSON of the receipts of 3 and of 1000 purchases as bytes, into a buffer reused
    /// from one document to the next: what every line of `receipt verify --json` and every answer of the service
    /// ends with.
    public struct JSONWriteFigures: Sendable {
        public let smallBytes: Int
        public let largeBytes: Int
        /// Documents written per second.
        public let small: Rate
        public let large: Rate
    }

    public struct Report: Sendable {
        public let machine: String
        public let threads: Int
        public let configuration: Configuration
        public let figures: [KeyFigures]
        public let json: JSONFigures
        public let jsonWrite: JSONWriteFigures
        public let peakMemoryBytes: Int
    }

    /// Runs every measurement for RSA-2048 and EC P-256; `progress` hears what is being measured.
    public static func run(
        _ configuration: Configuration = Configuration(),
        progress: (String) -> Void = { _ in }
    ) throws -> Report {
        var figures: [KeyFigures] = []
        for algorithm in [GeneratedKeyAlgorithm.rsa2048, .ecP256] {
            figures.append(try measure(algorithm, configuration, progress: progress))
        }
        let json = try measureJSON(keys: 60_000, configuration, progress: progress)
        let jsonWrite = measureJSONWrite(configuration, progress: progress)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Report(
            machine: machineDescription, threads: configuration.threads, configuration: configuration,
            figures: figures, json: json, jsonWrite: jsonWrite, peakMemoryBytes: usage.ru_maxrss * 1024)
    }

    static func measure(
        _ algorithm: GeneratedKeyAlgorithm,
        _ configuration: Configuration,
        progress: (String) -> Void
    ) throws -> KeyFigures {
        let name = algorithm == .rsa2048 ? "RSA-2048" : "EC P-256"
        let chain = try DevelopmentChain.create(algorithm: algorithm)
        let signer = try ReceiptSigner(credentials: chain.credentials)
        let small = sampleReceipt(purchases: 3)
        let large = sampleReceipt(purchases: 1000)
        let smallSigned = try signer.sign(small)
        let largeSigned = try signer.sign(large)
        let verifier = try ReceiptVerifier(trustAnchors: [chain.root])
        guard try verifier.verify(smallSigned).receipt == small, try verifier.verify(largeSigned).receipt == large
        else {
            throw BenchmarkError.selfCheckFailed
        }
        let payload = small.payloadDER
        let signature = try chain.signerKey.signature(for: payload, digest: .sha256)
        let key = try chain.signer.publicKey
        let pkcs7 = try OpenSSLPKCS7Verifier(anchors: [chain.root], at: small.creationDate.secondsSince1970)
        guard key.isValidSignature(signature, for: payload, digest: .sha256), pkcs7.verify(smallSigned) else {
            throw BenchmarkError.selfCheckFailed
        }

        progress("\(name): our verify against raw EVP_DigestVerify and d2i_PKCS7 + PKCS7_verify")
        let verifying = interleavedRates(
            configuration,
            [
                { _ = try? verifier.verify(smallSigned) },
                { _ = key.isValidSignature(signature, for: payload, digest: .sha256) },
                { _ = pkcs7.verify(smallSigned) },
            ])
        progress("\(name): our verify, \(configuration.threads) threads")
        let verifyAllCores = parallelRate(configuration) { _ = try? verifier.verify(smallSigned) }
        progress("\(name): our sign against raw EVP_DigestSign")
        let signing = interleavedRates(
            configuration,
            [
                { _ = try? signer.sign(small) },
                { _ = try? chain.signerKey.signature(for: payload, digest: .sha256) },
            ])
        progress("\(name): verify and parse 1000 purchases")
        let largeRate = rate(configuration) { _ = try? verifier.verify(largeSigned) }
        let (verify, rawVerify, pkcs7Verify) = (verifying[0], verifying[1], verifying[2])
        let (sign, rawSign) = (signing[0], signing[1])
        return KeyFigures(
            algorithm: name, verify: verify, verifyAllCores: verifyAllCores, rawVerify: rawVerify,
            pkcs7Verify: pkcs7Verify, sign: sign, rawSign: rawSign, verifyLargeMilliseconds: 1000 / largeRate.median,
            largeReceiptBytes: largeSigned.count, smallReceiptBytes: smallSigned.count)
    }

    /// Parse times of a `keys`-key object and of the array written with the same bytes.
    static func measureJSON(keys: Int, _ configuration: Configuration, progress: (String) -> Void) throws
        -> JSONFigures
    {
        let object = Array(("{" + (0..<keys).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}").utf8)
        let array = Array(("[" + (0..<keys).map { "\"k\($0)\",\($0)" }.joined(separator: ",") + "]").utf8)
        guard case .object(let parsed) = try JSONValue(parsing: object), parsed.members.count == keys,
            case .array(let elements) = try JSONValue(parsing: array), elements.count == 2 * keys
        else {
            throw BenchmarkError.jsonSelfCheckFailed
        }
        progress("JSON: a \(keys)-key object against an array of the same size")
        let parsing = interleavedRates(
            configuration,
            [
                { _ = try? JSONValue(parsing: object) },
                { _ = try? JSONValue(parsing: array) },
            ])
        return JSONFigures(
            keys: keys, bytes: object.count, objectMilliseconds: 1000 / parsing[0].median,
            arrayMilliseconds: 1000 / parsing[1].median, parseTimeRatio: parsing[1].ratio(to: parsing[0]))
    }

    /// Write rates of the verifyReceipt JSON of the receipts of 3 and of 1000 purchases.
    static func measureJSONWrite(_ configuration: Configuration, progress: (String) -> Void) -> JSONWriteFigures {
        let small = JSONValue.object(sampleReceipt(purchases: 3).verifyReceiptJSON)
        let large = JSONValue.object(sampleReceipt(purchases: 1000).verifyReceiptJSON)
        progress("JSON: writing the verifyReceipt JSON of 3 and of 1000 purchases")
        var buffer: [UInt8] = []
        let writing = interleavedRates(
            configuration,
            [small, large].map { document in
                {
                    buffer.removeAll(keepingCapacity: true)
                    document.write(to: &buffer)
                }
            })
        return JSONWriteFigures(
            smallBytes: small.serializedBytes().count, largeBytes: large.serializedBytes().count, small: writing[0],
            large: writing[1])
    }

    /// A receipt like a subscription app's: the renewals of one subscription.
    static func sampleReceipt(purchases: Int) -> Receipt {
        let start: Int64 = 1_577_836_800_000  // 2020-01-01
        let week: Int64 = 7 * 86_400_000
        return Receipt(
            bundleID: "com.example.game",
            creationDate: ReceiptDate(millisecondsSince1970: start + Int64(purchases + 1) * week),
            receiptType: "Production", appItemID: 1_234_567_890, applicationVersion: "42",
            originalApplicationVersion: "1.0",
            originalPurchaseDate: ReceiptDate(millisecondsSince1970: start),
            inAppPurchases: (0..<Int64(purchases)).map { index in
                InAppPurchase(
                    productID: "com.example.pro.weekly", transactionID: String(1_000_000_000_000_000 + index),
                    purchaseDate: ReceiptDate(millisecondsSince1970: start + index * week),
                    originalTransactionID: "1000000000000000",
                    originalPurchaseDate: ReceiptDate(millisecondsSince1970: start), productType: 3,
                    expiresDate: ReceiptDate(millisecondsSince1970: start + (index + 1) * week),
                    webOrderLineItemID: 1_000_000_050_000_000 + index, isTrialPeriod: index == 0,
                    isInIntroOfferPeriod: false)
            })
    }

    /// Runs `body` for `secondsPerRound` per round and returns the median rate over the rounds.
    static func rate(_ configuration: Configuration, _ body: () -> Void) -> Rate {
        withoutActuallyEscaping(body) { interleavedRates(configuration, [$0])[0] }
    }

    /// Each round runs every body in turn for `secondsPerRound`; one rate per body.
    static func interleavedRates(_ configuration: Configuration, _ bodies: [() -> Void]) -> [Rate] {
        var rounds = Array(repeating: [Double](), count: bodies.count)
        for _ in 0..<configuration.rounds {
            for (index, body) in bodies.enumerated() {
                let (count, elapsed) = loop(for: configuration.secondsPerRound, body)
                rounds[index].append(Double(count) / elapsed)
            }
        }
        return rounds.map { Rate(median: median($0), rounds: $0) }
    }

    /// The same with `threads` threads running `body` at once; the rate is their sum.
    static func parallelRate(_ configuration: Configuration, _ body: @escaping @Sendable () -> Void) -> Rate {
        let rounds = (0..<configuration.rounds).map { _ in
            let total = Mutex(0)
            let start = now()
            DispatchQueue.concurrentPerform(iterations: configuration.threads) { _ in
                let count = loop(for: configuration.secondsPerRound, body).count
                total.withLock { $0 += count }
            }
            return Double(total.withLock { $0 }) / (now() - start)
        }
        return Rate(median: median(rounds), rounds: rounds)
    }

    private static func loop(for seconds: Double, _ body: () -> Void) -> (count: Int, elapsed: Double) {
        let start = now()
        var count = 0
        var elapsed = 0.0
        repeat {
            for _ in 0..<8 { body() }
            count += 8
            elapsed = now() - start
        } while elapsed < seconds
        return (count, elapsed)
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static var machineDescription: String {
        let cpuinfo = firstBytes(of: "/proc/cpuinfo")
        let line = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        let model = line?.split(separator: ":", maxSplits: 1).last.map { field in
            String(field.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        }
        return "\(model ?? "unknown CPU"), \(AvailableCPUs.count) cores, \(openSSLVersion)"
    }

    /// The first 64 KiB of the file at `path` as text (the CPU's model is on /proc/cpuinfo's fifth line); empty
    /// when it cannot be read.
    private static func firstBytes(of path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = read(descriptor, &buffer, buffer.count)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
    }
}

public enum BenchmarkError: Error, CustomStringConvertible {
    case selfCheckFailed
    case jsonSelfCheckFailed

    public var description: String {
        switch self {
        case .selfCheckFailed: "the benchmark's own receipts did not verify; nothing was measured"
        case .jsonSelfCheckFailed: "the benchmark's own JSON texts did not parse as written; nothing was measured"
        }
    }
}
