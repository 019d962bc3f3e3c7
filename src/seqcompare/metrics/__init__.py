"""All-pairs metrics, one subpackage per family, each on the shared tile engine."""
