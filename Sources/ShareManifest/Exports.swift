// A host app catches the one error type of the system-call funnel that
// ShareManifest's API throws (`SystemError`) without importing the funnel.
@_exported import struct SystemCalls.SystemError
