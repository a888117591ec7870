internal import CReceiptShims
internal import CReceiptZlib

/// zlib (RFC 1950) compression with hard limits on what inflating may produce.
public enum Zlib {
    /// Why compressed bytes were not inflated.
    public enum InflateError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Not a complete, valid zlib stream (zlib's message included), or bytes after its end.
        case malformed(String)
        /// The output would exceed `limit` bytes.
        case outputTooLarge(limit: Int)
        /// The output would be more than `limit` times the input.
        case ratioTooHigh(limit: Int)

        public var description: String {
            switch self {
            case .malformed(let detail): "not a valid zlib stream: \(detail)"
            case .outputTooLarge(let limit): "inflates to more than \(limit) bytes"
            case .ratioTooHigh(let limit): "inflates to more than \(limit) times its size"
            }
        }
    }

    /// Inflates a zlib stream that fills `input` exactly. Output is produced in 64 KiB steps and inflating stops as
    /// soon as it would exceed `maximumOutput` bytes or `maximumRatio` times the input, so a bomb costs at most one
    /// step beyond the limit.
    public static func inflate(
        _ input: ArraySlice<UInt8>,
        maximumOutput: Int,
        maximumRatio: Int
    ) throws(InflateError) -> [UInt8] {
        let (ratioLimit, overflow) = input.count.multipliedReportingOverflow(by: maximumRatio)
        let outputLimit = min(maximumOutput, overflow ? Int.max : ratioLimit)
        guard input.count <= Int(uInt.max) else { throw .malformed("more than 4 GiB of compressed input") }
        var stream = z_stream()
        guard receipt_inflateInit(&stream) == Z_OK else { throw .malformed("zlib could not start") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let input = Array(input)
        var status = Z_OK
        input.withUnsafeBufferPointer { inputBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = uInt(inputBuffer.count)
            while status == Z_OK {
                chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    status = CReceiptZlib.inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk.prefix(chunk.count - Int(stream.avail_out)))
                if output.count > outputLimit { break }
            }
        }
        if output.count > outputLimit {
            throw output.count > maximumOutput
                ? .outputTooLarge(limit: maximumOutput) : .ratioTooHigh(limit: maximumRatio)
        }
        guard status == Z_STREAM_END else {
            let message =
                stream.msg.map { String(cString: $0) } ?? (status == Z_BUF_ERROR ? "truncated" : "error \(status)")
            throw .malformed(message)
        }
        guard stream.avail_in == 0 else { throw .malformed("\(stream.avail_in) bytes after the end of the stream") }
        return output
    }

    /// Compresses `input` as one zlib stream at the best compression level; nil only when zlib cannot allocate
    /// its state or the input exceeds 4 GiB.
    public static func deflate(_ input: [UInt8]) -> [UInt8]? {
        guard input.count <= Int(uInt.max) else { return nil }
        var stream = z_stream()
        guard receipt_deflateInit(&stream, Z_BEST_COMPRESSION) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))))
        let status = input.withUnsafeBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(outputBuffer.count)
                return CReceiptZlib.deflate(&stream, Z_FINISH)
            }
        }
        // deflateBound guarantees room for the whole stream, so Z_FINISH completes in one call.
        guard status == Z_STREAM_END else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }
}
