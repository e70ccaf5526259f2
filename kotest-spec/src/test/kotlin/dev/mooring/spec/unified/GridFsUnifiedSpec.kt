package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `gridfs` suite (unified format: the `bucket` entity's upload, download, downloadByName,
 * delete, deleteByName, rename, renameByName) over the test kit, run through the driver's
 * GridFSBucket ([GridFsOperations]); see [unifiedSuite].
 */
class GridFsUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    unifiedSuite("gridfs")
})
