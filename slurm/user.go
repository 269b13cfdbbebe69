package slurm

// User is the user the client acts as (X-SLURM-USER-NAME), "" when the
// token alone names it.
func (c *Client) User() string { return c.cfg.User }
