package dev.mooring.java

import dev.mooring.cmap.OidcCallback
import dev.mooring.cmap.OidcCallbackContext
import dev.mooring.cmap.OidcCredential
import kotlinx.coroutines.future.await
import java.util.concurrent.CompletionStage

/**
 * A MONGODB-OIDC token source for Java (the Kotlin [OidcCallback] with a [CompletionStage]
 * instead of a suspend function): return a stage that completes with the credential, or with
 * null for none. Register it with [ClusterSettingsBuilder.oidcCallback] (machine workflow) or
 * [ClusterSettingsBuilder.oidcHumanCallback] (human workflow).
 *
 * Concurrency: called by one thread at a time per cluster, at least 100 ms apart; when
 * [OidcCallbackContext.timeoutMillis] passes (or the connection attempt is abandoned) the
 * returned stage is cancelled if it is a [java.util.concurrent.CompletableFuture]. Do not block
 * the calling thread: return a stage completed by your own executor.
 */
public fun interface OidcTokenCallback {
    /** Starts fetching a credential for [context]. */
    public fun onRequest(context: OidcCallbackContext): CompletionStage<OidcCredential?>
}

internal fun OidcTokenCallback.asOidcCallback(): OidcCallback = OidcCallback { ctx -> onRequest(ctx).await() }
