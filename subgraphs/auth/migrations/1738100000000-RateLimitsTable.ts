import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The login rate limits' table (subgraphs/auth/login-throttle.ts), made here rather than by
 * rate-limiter-flexible, whose MySQL table declares its key `CHARACTER SET utf8` (utf8mb3): a
 * username with a 4-byte character (an emoji) failed the insert and login answered 500. The key
 * is compared byte for byte (utf8mb4_bin), as the username keys it holds are: a collation that
 * folds would let one emoji's failures lock another. A table the library made before is converted.
 */
export class RateLimitsTable1738100000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'mysql') {
      // The library's own SQLite table: TEXT holds any UTF-8 and compares bytes.
      await queryRunner.query(
        'CREATE TABLE IF NOT EXISTS rate_limits (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)',
      );
      return;
    }
    if (await queryRunner.hasTable('rate_limits')) {
      await queryRunner.query('ALTER TABLE rate_limits CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin');
      return;
    }
    await queryRunner.query(
      'CREATE TABLE rate_limits (`key` VARCHAR(255) NOT NULL, `points` INT(9) NOT NULL DEFAULT 0, `expire` BIGINT UNSIGNED, PRIMARY KEY (`key`)) ' +
        'ENGINE = InnoDB DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Left to the library again, which makes it when it is missing.
    await queryRunner.query('DROP TABLE IF EXISTS rate_limits');
  }
}
