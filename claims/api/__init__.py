"""Claims API: ResourceClaims with their allocation and consumers, and diagnosis findings."""
