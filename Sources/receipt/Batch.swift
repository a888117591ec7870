import Foundation
import PurchaseVerifier
import ReceiptVerifier
import StrictJSON

/// `receipt verify` over many files: chunks of files verified on all cores, one line per receipt in input order,
/// with memory that does not grow with the number of files.
enum Batch {
    /// Receipts read and verified together; what is held in memory at once.
    static let chunkSize = 512

    /// The files to verify when the arguments ask for a batch (several paths, or a directory), else nil.
    static func files(_ paths: [String]) throws(CommandFailure) -> [String]? {
        var isDirectory: ObjCBool = false
        guard
            paths.count > 1
                || (paths.count == 1 && FileManager.default.fileExists(atPath: paths[0], isDirectory: &isDirectory)
                    && isDirectory.boolValue)
        else { return nil }
        var files: [String] = []
        for path in paths {
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                files.append(path)
                continue
            }
            do {
                let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }
                    .sorted()
                let prefix = path.hasSuffix("/") ? path : path + "/"
                files += names.map { prefix + $0 }.filter { file in
                    FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && !isDirectory.boolValue
                }
            } catch {
                throw .io("cannot list \(path): \(error.localizedDescription)")
            }
        }
        return files
    }

    static func verify(_ files: [String], with verifier: PurchaseVerifier, options: VerificationOptions, json: Bool)
        throws(CommandFailure)
    {
        var invalid = 0
        var unreadable = 0
        for start in stride(from: 0, to: files.count, by: chunkSize) {
            let chunk = Array(files[start..<min(start + chunkSize, files.count)])
            var inputs: [[UInt8]] = []
            var readErrors: [Int: String] = [:]
            for (index, file) in chunk.enumerated() {
                do {
                    inputs.append(try Files.read(file, limit: verifier.receipts.limits.maximumInputSize))
                } catch {
                    readErrors[index] = error.message
                    inputs.append([])
                }
            }
            let results = verifier.verify(many: inputs, options: options)
            var output = ""
            for (index, file) in chunk.enumerated() {
                if let message = readErrors[index] {
                    unreadable += 1
                    output +=
                        json
                        ? JSONValue.object(
                            JSONObject([
                                "file": .string(file), "valid": .bool(false),
                                "error": .object(
                                    JSONObject(["code": .string("unreadable_file"), "message": .string(message)])),
                            ])
                        ).serialized() + "\n"
                        : "\(file): unreadable: \(message)\n"
                    continue
                }
                let result = results[index]
                if case .failure = result { invalid += 1 }
                if json {
                    var line = JSONObject(["file": .string(file)])
                    let format = PurchaseProofFormat.detect(inputs[index])
                    for member in ProofOutput.json(result, format: format).members { line[member.key] = member.value }
                    output += JSONValue.object(line).serialized() + "\n"
                } else {
                    switch result {
                    case .success(.appReceipt(let verified)):
                        output +=
                            "\(file): valid: \(verified.receipt.bundleID), \(verified.receipt.inAppPurchases.count) purchases\n"
                    case .success(let proof):
                        output += "\(file): valid \(proof.format.rawValue)\n"
                    case .failure(let error): output += "\(file): invalid: \(error)\n"
                    }
                }
            }
            Files.writeStandardOutput(Array(output.utf8))
        }
        if unreadable > 0 { throw .io("\(unreadable) of \(files.count) files could not be read") }
        if invalid > 0 { throw .rejected("\(invalid) of \(files.count) are invalid") }
    }
}
