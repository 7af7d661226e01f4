package config

// fileConfig is one file as written. Pointers tell "unset" from a zero value,
// so a local file overrides only what it mentions.
type fileConfig struct {
	Project struct {
		Slug *string `toml:"slug"`
	} `toml:"project"`
	Docker struct {
		Image        *string           `toml:"image"`
		Build        *string           `toml:"build"`
		Context      *string           `toml:"context"`
		Target       *string           `toml:"target"`
		Args         map[string]string `toml:"args"`
		SetupCommand *string           `toml:"setup-command"`
		Network      *string           `toml:"network"`
		User         *userID           `toml:"user"`
		ReadOnly     *bool             `toml:"read-only"`
		Memory       *memorySize       `toml:"memory"`
		CPUs         *cpuCount         `toml:"cpus"`
		Pids         *pidsLimit        `toml:"pids"`
		Env          map[string]string `toml:"env"`
		Disk         *byteSize         `toml:"disk"`
		Isolation    *string           `toml:"isolation"`
		GVisor       *string           `toml:"gvisor-runtime"`
		GVisorFlags  []string          `toml:"gvisor-flags"`
	} `toml:"docker"`
	Kubernetes struct {
		RuntimeClass *string `toml:"runtime-class"`
	} `toml:"kubernetes"`
	Limits struct {
		Sandboxes    *sandboxCount `toml:"sandboxes"`
		MemoryBudget *memoryBudget `toml:"memory-budget"`
		Idle         *idleTime     `toml:"idle"`
	} `toml:"limits"`
	Pool struct {
		Size *poolSize `toml:"size"`
	} `toml:"pool"`
	Setup struct {
		Inputs []string `toml:"inputs"`
		Cache  *bool    `toml:"cache"`
		Keep   []string `toml:"keep"`
	} `toml:"setup"`
	Snapshot struct {
		MaxFileSize *byteSize `toml:"max-file-size"`
		MaxCallSize *byteSize `toml:"max-call-size"`
	} `toml:"snapshot"`
	Agent struct {
		OutputLimit *byteSize `toml:"output-limit"`
		Command     []string  `toml:"command"`
	} `toml:"agent"`
	Review struct {
		Check *string `toml:"check"`
	} `toml:"review"`
	Network struct {
		Mode   *string   `toml:"mode"`
		Allow  []string  `toml:"allow"`
		Egress *string   `toml:"egress"`
		Setup  *setupNet `toml:"setup"`
	} `toml:"network"`
	Secrets   map[string]fileSecret `toml:"secrets"`
	Ports     []filePort            `toml:"ports"`
	Container struct {
		Services map[string]fileService `toml:"services"`
	} `toml:"container"`
}

type fileSecret struct {
	Env     *string  `toml:"env"`
	Command *string  `toml:"command"`
	Inject  []string `toml:"inject"`
	Header  *string  `toml:"header"`
}

type filePort struct {
	Name   *string     `toml:"name"`
	Target *portNumber `toml:"target"`
}

type fileService struct {
	Command     *command           `toml:"command"`
	Signals     map[string]*signal `toml:"signals"`
	StopTimeout *int               `toml:"stop-timeout"`
}
