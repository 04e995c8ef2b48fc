# Hostile adapter: never says hello and never exits ($1: a unique sleep length to find leftovers).
sleep "${1:-3600}"
