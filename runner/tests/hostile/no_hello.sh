# Hostile adapter: exits without a word.
exit 0
