import CZlib
import Foundation

/// gzip-compresses `data` with zlib.
func gzipCompressed(_ data: Data) -> [UInt8] {
    var stream = z_stream()
    guard deflateInit2_(&stream, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
        return []
    }
    defer { deflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    data.withUnsafeBytes { input in
        stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        stream.avail_in = UInt32(input.count)
        var status: Int32 = Z_OK
        while status == Z_OK {
            chunk.withUnsafeMutableBufferPointer { buffer in
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(buffer.count)
                status = deflate(&stream, Z_FINISH)
                output.append(contentsOf: buffer[0..<(buffer.count - Int(stream.avail_out))])
            }
        }
    }
    return output
}
