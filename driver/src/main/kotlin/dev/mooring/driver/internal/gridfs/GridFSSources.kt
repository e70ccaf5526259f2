package dev.mooring.driver.internal.gridfs

import io.ktor.utils.io.ByteReadChannel
import io.ktor.utils.io.readAvailable
import java.io.InputStream
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext

/** Upload sources as cold flows of byte arrays of at most one chunk each, read as they are collected (one array at a time). Stateless. */
internal object GridFSSources {
    /** [input] read on [Dispatchers.IO] in [chunkSize] reads until its end; not closed. */
    fun of(input: InputStream, chunkSize: Int): Flow<ByteArray> = flow {
        val buffer = ByteArray(chunkSize)
        while (true) {
            val n = withContext(Dispatchers.IO) { input.readNBytes(buffer, 0, chunkSize) }
            if (n <= 0) break
            emit(buffer.copyOf(n))
        }
    }

    /** [channel] read until it is closed for reading; not cancelled. */
    fun of(channel: ByteReadChannel, chunkSize: Int): Flow<ByteArray> = flow {
        val buffer = ByteArray(chunkSize)
        while (true) {
            val n = channel.readAvailable(buffer, 0, chunkSize)
            if (n < 0) break
            if (n > 0) emit(buffer.copyOf(n))
        }
    }
}
