package helper

import "github.com/litterbox-dev/litterbox/internal/helper/protocol"

// Name is the helper's file name in the sandbox; the litterbox binary
// behaves as the helper when started under this name.
const Name = protocol.Name
